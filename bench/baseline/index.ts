// Two baselines: a trivial Hono route, and a Worker that makes one Durable Object call which does
// one SQLite write. Coffer's scenarios are reported as ratios to these.
import { DurableObject } from 'cloudflare:workers';
import { Hono } from 'hono';

interface Env {
  ONE: DurableObjectNamespace<OneWrite>;
}

export class OneWrite extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)');
  }

  async write(): Promise<void> {
    this.ctx.storage.sql.exec('INSERT INTO hits (at) VALUES (?)', Date.now());
  }
}

const app = new Hono<{ Bindings: Env }>();
app.get('/', (c) => c.text('ok'));
app.get('/do', async (c) => {
  await c.env.ONE.get(c.env.ONE.idFromName('one')).write();
  return c.text('ok');
});

export default app;
