// Three baselines: a trivial Hono route, and a Worker that makes one Durable Object call which does
// one SQLite write, or one SQLite read. Coffer's scenarios are reported as ratios to these (reads
// to the read, writes to the write).
import { DurableObject } from 'cloudflare:workers';
import { Hono } from 'hono';

interface Env {
  ONE: DurableObjectNamespace<OneWrite>;
}

export class OneWrite extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)');
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, value BLOB NOT NULL)');
    ctx.storage.sql.exec('INSERT OR IGNORE INTO item (id, value) VALUES (1, randomblob(256))');
  }

  async read(): Promise<number> {
    return this.ctx.storage.sql.exec<{ value: ArrayBuffer }>('SELECT value FROM item WHERE id = 1').one().value.byteLength;
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

app.get('/do-read', async (c) => {
  await c.env.ONE.get(c.env.ONE.idFromName('one')).read();
  return c.text('ok');
});

export default app;
