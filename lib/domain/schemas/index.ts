// The API's and the stream's shapes, in one place (docs/api.md): objects and route answers.
export * from './lease';
export * from './audit';
export * from './responses';
export * from './alerts';
export * from './webhooks';
export * from './accounts';
export * from './demo';
export * from './source-panel';
export * from './telemetry';
export * from './canary';
