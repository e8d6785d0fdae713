// Worker entry: the Hono app serving Vault's HTTP API, and the Durable Object classes.
import { Hono } from 'hono';
import type { Env } from '../rpc/env';
import { errorResponse } from './envelope';
import { handleV1 } from './handler';

export { AuditObject } from '../../durable-objects/audit';
export { MountObject } from '../../durable-objects/mount';
export { SystemObject } from '../../durable-objects/system';
export { TokenStoreObject } from '../../durable-objects/token-store';

const app = new Hono<{ Bindings: Env }>();

app.all('/v1/*', (c) => handleV1(c.req.raw, c.env));
// Vault answers anything outside /v1 (and its UI) with an empty error list.
app.all('*', () => errorResponse(404, []));

export default app;
