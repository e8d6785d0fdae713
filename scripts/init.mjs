// `npm run init -- <url> [data dir]`: initialises a Coffer started without the launcher (for
// example `npx wrangler dev`) the way `npm start` initialises its own: recovery key and root token
// in <data dir>/init.json (default .coffer/wrangler), and kv version 2 at secret/.
import path from 'node:path';
import { initialise, isInitialised } from './first-start.mjs';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const [url = 'http://127.0.0.1:8787', dataDir = path.join(ROOT, '.coffer/wrangler')] = process.argv.slice(2);

try {
  if (await isInitialised(url)) {
    console.log(`${url} is already initialised; nothing to do.`);
  } else {
    const initFile = await initialise(url.replace(/\/$/, ''), path.resolve(dataDir));
    console.log(`Initialised ${url}; the root token and the recovery key are in ${initFile}. kv version 2 is mounted at secret/.`);
    console.log(`    export VAULT_ADDR='${url}'`);
    console.log(`    export VAULT_TOKEN="$(node -p 'require("${initFile}").root_token')"`);
  }
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
}
