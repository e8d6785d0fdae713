/** The reason test/integration/offload/object-reset.test.ts resets a mount's object with (vitest.config.ts ignores its unhandled rejections). */
export const OBJECT_RESET_REASON = 'test: object reset by object-reset.test.ts';
