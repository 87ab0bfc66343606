// Swagger UI on /api/docs, reading the hub's own OpenAPI document (see hub/web/api_docs.py).
"use strict";
(function () {
  const root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({ url: root.dataset.openapi, domNode: root, deepLinking: true });
})();
