/** A configuration that cannot be used: every problem, each naming the file, its line and the key. */
export class ConfigError extends Error {
  /** One line per problem: `file:line:column: key: message`. */
  readonly problems: readonly string[];
  constructor(message: string | readonly string[]) {
    const problems = typeof message === 'string' ? [message] : message;
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
