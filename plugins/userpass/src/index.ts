// The userpass auth method as a plugin isolate's entry (built by plugins/sdk/build.mjs).
import { definePlugin } from '../../sdk';
import { userpassBackend } from './backend';

export default definePlugin(() => userpassBackend());
