// The local plugin directory (COFFER_PLUGIN_DIR, by default <COFFER_DATA_DIR>/plugins) as the
// Worker's PLUGIN_DIR service: GET /<command> answers the file's bytes, or 404. What production
// keeps in an R2 bucket (binding PLUGINS). Nothing outside the directory can be named.
import { mkdirSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export function pluginDirectory(dataDir) {
  const dir = path.resolve(process.env.COFFER_PLUGIN_DIR ?? path.join(dataDir, 'plugins'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** A Miniflare function service reading files of `dir`. */
export function pluginDirService(dir) {
  const root = realpathSync(dir);
  return async (request) => {
    const segments = new URL(request.url).pathname.split('/').slice(1).map(decodeURIComponent);
    if (segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\') || s.includes('\0'))) return new Response('bad path', { status: 400 });
    try {
      const file = realpathSync(path.join(root, ...segments));
      // A symlink may not lead out of the directory.
      if (!file.startsWith(root + path.sep)) return new Response('outside the plugin directory', { status: 404 });
      return new Response(await readFile(file));
    } catch (e) {
      if (e.code === 'ENOENT' || e.code === 'EISDIR' || e.code === 'ENOTDIR') return new Response('not found', { status: 404 });
      throw e;
    }
  };
}
