// Go's text/template with Vault's template functions (sdk/helper/template), for the templates
// Vault renders dynamic usernames with (the AWS engine's username_template, the database
// engines'). compileTemplate parses once; render runs synchronously against a data map.

import { TemplateError } from './errors';
import { FUNCTIONS } from './functions';
import { Parser } from './parser';
import { Executor } from './render';
import { byteLength, fromData } from './values';

export { TemplateError } from './errors';

export interface CompiledTemplate {
  /** Renders with `data` as dot; `now` is the time unix_time, unix_time_millis and timestamp see. */
  render(data: Record<string, unknown>, now?: Date): string;
}

/** The name errors carry, as Vault names its templates: "template: template:1: ...". */
const TEMPLATE_NAME = 'template';

/** Vault refuses templates of this many bytes or more. */
export const MAX_TEMPLATE_BYTES = 100_000;

/** Parses a template; throws TemplateError with Go's message when it does not parse. */
export function compileTemplate(text: string): CompiledTemplate {
  if (byteLength(text) >= MAX_TEMPLATE_BYTES) {
    throw new TemplateError('template too large, length of template must be less than 100,000', 'parse');
  }
  const root = new Parser(text, TEMPLATE_NAME, (name) => FUNCTIONS.has(name)).parse();
  return {
    render(data: Record<string, unknown>, now: Date = new Date()): string {
      const dot = data === null || data === undefined ? undefined : fromData(data);
      return new Executor(text, TEMPLATE_NAME, FUNCTIONS, now, dot).run(root);
    },
  };
}
