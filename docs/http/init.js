// Renders openapi.json (spec/openapi.yaml, its references to asyncapi.yaml bundled in) with Redoc.
Redoc.init(
  'openapi.json',
  { expandResponses: '200,201', jsonSampleExpandLevel: 3, pathInMiddlePanel: true, sortTagsAlphabetically: false },
  document.getElementById('redoc'),
);
