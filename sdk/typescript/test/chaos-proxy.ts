// A TCP relay between agents and the hub that can cut any connection at any moment.
//
// Cutting resets both halves at once (no close handshake), mid-frame if it happens to be:
// an uplink may reach the hub while its `ack` is lost, a downlink may be lost in flight. That
// is the failure the SDK's pending uplinks, replay and deduplication must absorb. The same
// relay as tests/sdk/chaos_proxy.py, in Node.
import * as net from "node:net";

type Link = [net.Socket, net.Socket];

export class ChaosProxy {
  kills = 0;
  private readonly links = new Set<Link>();
  private readonly server: net.Server;
  private readonly targetPort: number;
  private random: () => number;

  constructor(targetPort: number, random: () => number = Math.random) {
    this.targetPort = targetPort;
    this.random = random;
    this.server = net.createServer((client) => this.accept(client));
  }

  get url(): string {
    const address = this.server.address() as net.AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  get liveLinks(): number {
    return this.links.size;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const [client, upstream] of this.links) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    this.links.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Cut one live connection chosen at random; false if none is open. */
  killOne(): boolean {
    const links = [...this.links];
    if (!links.length) return false;
    const link = links[Math.floor(this.random() * links.length)]!;
    this.links.delete(link);
    link[0].resetAndDestroy();
    link[1].resetAndDestroy();
    this.kills += 1;
    return true;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, "127.0.0.1");
    const link: Link = [client, upstream];
    this.links.add(link);
    const cut = () => {
      this.links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", cut).on("close", cut);
    upstream.on("error", cut).on("close", cut);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** A seeded generator (mulberry32), so a run's choices can be replayed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
