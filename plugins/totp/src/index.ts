// The TOTP secrets engine as a plugin isolate's entry (built by plugins/sdk/build.mjs).
import { definePlugin } from '../../sdk';
import { totpBackend } from './backend';

export default definePlugin(() => totpBackend());
