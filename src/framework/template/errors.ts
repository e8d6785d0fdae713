// The one error the template engine throws, for templates that do not parse and for failures
// while rendering; the message is Go's ("template: template:1: function \"foo\" not defined").

export class TemplateError extends Error {
  constructor(
    message: string,
    /** Whether parsing or rendering failed: Vault reports "unable to parse template" or "unable to apply template". */
    readonly phase: 'parse' | 'execute' = 'parse',
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}
