// A plugin that misbehaves on request, for the sandbox tests: loops, throws, awaits forever,
// reaches for the network, and reports what its isolate can see. `ECHO_VERSION` in its catalog
// env tells two registrations of it apart.
import { definePlugin, log, type Backend, type PluginEnv } from '../../../plugins/sdk';
import { badRequest, notFound } from '../../../src/framework/errors';
import { getJSON, putJSON } from '../../../src/framework/storage';

function misbehave(env: PluginEnv): Backend {
  return {
    type: 'misbehave',
    paths: [
      {
        pattern: 'item/(?<name>\\w+)',
        fields: { name: { type: 'string', description: 'item name' }, value: { type: 'string', description: 'anything' } },
        existenceCheck: async (req, f) => (await req.storage.get(`item/${f.get<string>('name')}`)) !== null,
        operations: {
          create: async (req, f) => {
            await putJSON(req.storage, `item/${f.get<string>('name')}`, { value: f.get<string>('value'), created: true });
            return null;
          },
          update: async (req, f) => {
            await putJSON(req.storage, `item/${f.get<string>('name')}`, { value: f.get<string>('value'), created: false });
            return null;
          },
          read: async (req, f) => {
            const item = await getJSON<Record<string, unknown>>(req.storage, `item/${f.get<string>('name')}`);
            if (!item) throw notFound();
            return { data: item };
          },
          delete: async (req, f) => {
            await req.storage.delete(`item/${f.get<string>('name')}`);
            return null;
          },
        },
      },
      {
        // PathDef.prefetch through the Worker Loader: the item comes with the call, and once
        // written it is read from the host again. A read that settles within two microtask turns
        // cannot have been a call back to the host. BAD_PREFETCH=1 declares a template the host refuses.
        pattern: 'swap/(?<name>\\w+)',
        fields: { name: { type: 'string', description: 'item name' }, value: { type: 'string', description: 'the new value' } },
        prefetch: { update: [env.BAD_PREFETCH === '1' ? 'item/{nope}' : 'item/{name}'] },
        operations: {
          update: async (req, f) => {
            const key = `item/${f.get<string>('name')}`;
            const read = async () => {
              let local = false;
              const value = req.storage.get(key).then((v) => ((local = true), v));
              await Promise.resolve();
              await Promise.resolve();
              const settled = local;
              const raw = await value;
              return { value: raw ? (JSON.parse(new TextDecoder().decode(raw)) as { value: string }).value : null, local: settled };
            };
            const before = await read();
            await putJSON(req.storage, key, { value: f.get<string>('value'), created: false });
            return { data: { before, after: await read() } };
          },
        },
      },
      {
        pattern: 'item/?',
        operations: { list: async (req) => ({ data: { keys: await req.storage.list('item/') } }) },
      },
      {
        pattern: 'version',
        operations: {
          read: async (req) => ({ data: { version: env.ECHO_VERSION ?? '', args: env.COFFER_PLUGIN_ARGS ?? '', caller: req.auth?.displayName ?? '', policies: req.auth?.policies ?? [] } }),
        },
      },
      {
        pattern: 'loop',
        operations: {
          read: async () => {
            let n = 0;
            for (;;) n++;
          },
        },
      },
      { pattern: 'throw', operations: { read: async () => { throw new Error('the plugin gave up'); } } },
      { pattern: 'bad', operations: { read: async () => { throw badRequest('this plugin refuses that'); } } },
      // A pending timer: workerd cancels a promise that can never settle by itself, not this.
      { pattern: 'hang', operations: { read: () => new Promise((resolve) => setTimeout(() => resolve(null), 600_000)) } },
      {
        pattern: 'net',
        fields: { url: { type: 'string', description: 'what to fetch' } },
        operations: {
          read: async (_req, f) => {
            try {
              const res = await fetch(f.get<string>('url'));
              return { data: { reached: true, status: res.status } };
            } catch (e) {
              return { data: { reached: false, error: e instanceof Error ? e.message : String(e) } };
            }
          },
        },
      },
      {
        pattern: 'peek',
        fields: { key: { type: 'string', description: 'a storage key to try' } },
        operations: {
          read: async (req, f) => {
            let value: string | null = null;
            let error = '';
            try {
              const raw = await req.storage.get(f.get<string>('key'));
              value = raw ? new TextDecoder().decode(raw) : null;
            } catch (e) {
              error = e instanceof Error ? e.message : String(e);
            }
            const g = globalThis as Record<string, unknown>;
            log('info', `peek ${f.get<string>('key')}`);
            return {
              data: {
                value,
                error,
                top: await req.storage.list(''),
                env: Object.keys(env).sort(),
                // What a plugin must not find: bindings, the host's objects, a token.
                globals: ['SYSTEM', 'MOUNTS', 'TOKENS', 'AUDIT', 'LOADER', 'PLUGINS', 'PLUGIN_DIR', 'SEAL_KEY', 'HSM_BRIDGE'].filter((k) => g[k] !== undefined),
                token: JSON.stringify(req).includes('hvs.') || 'clientToken' in req,
              },
            };
          },
        },
      },
    ],
  };
}

export default definePlugin(misbehave);
