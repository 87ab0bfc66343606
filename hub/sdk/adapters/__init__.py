"""Ready-made adapters built on the SDK alone: the simulated agent and the command runner."""
