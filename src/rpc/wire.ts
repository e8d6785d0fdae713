// The results a Durable Object answers the Worker with: defined by the pipeline that makes them.
export { errorResult, type WireResult } from '../pipeline/result';
