// Reading the config file: its text, JSON errors placed by line and column (never quoted),
// and ${VAR} references to the environment.
import { readFileSync } from 'node:fs';
import { formatPath, type PathKey } from './issues';

export function readConfigFile(file: string, problems: string[]): string | undefined {
  try {
    return readFileSync(/*turbopackIgnore: true*/ file, 'utf8');
  } catch (error) {
    problems.push(`${file}: expected a readable file, found ${(error as NodeJS.ErrnoException).code ?? 'an unreadable file'}`);
    return undefined;
  }
}

export function parseConfigText(text: string | undefined, problems: string[]): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8's messages quote the text around the error ("nter2@h", ], ...), which may hold a
    // password: only the place is given, and the kind of error when V8 names it in fixed words.
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : syntaxErrorOffset(text);
    const kind = message.replace(/ in JSON at position \d+.*$/s, '');
    const reason = JSON_ERROR_KINDS.test(kind) ? kind.charAt(0).toLowerCase() + kind.slice(1) : 'an unexpected character';
    problems.push(`${lineAndColumn(text, offset)}: expected valid JSON, found a syntax error (${reason})`);
    return undefined;
  }
}

/** V8's JSON.parse messages that quote nothing of the text (the quotes in them are JSON's own punctuation). */
const JSON_ERROR_KINDS =
  /^(?:Unterminated string|Bad control character in string literal|Bad escaped character|Bad Unicode escape|Unexpected end of JSON input|Unexpected non-whitespace character after JSON|Expected (?:property name or '\}'|',' or '\}' after property value|',' or '\]' after array element|double-quoted property name|':' after property name)|Exponent part is missing a number|Unterminated fractional number|No number after minus sign)$/;

/**
 * Where JSON.parse gave up, for messages that do not say (`Unexpected token 'h', "..." is not
 * valid JSON`): the longest prefix of the text that could still begin valid JSON.
 */
function syntaxErrorOffset(text: string): number {
  const viable = (length: number) => {
    try {
      JSON.parse(text.slice(0, length));
      return true;
    } catch (error) {
      const message = (error as Error).message;
      const at = /at position (\d+)/.exec(message);
      return message.startsWith('Unexpected end of JSON input') || (at !== null && Number(at[1]) >= length);
    }
  };
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (viable(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/**
 * Replaces `${NAME}` in every string of the file by the environment variable NAME,
 * so secrets can stay out of the file. `$${` stands for a literal `${`.
 */
export function interpolateEnv(
  value: unknown,
  env: Record<string, string | undefined>,
  problems: string[],
  at: PathKey[] = [],
  root: unknown = value,
): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$?\$\{([^}]*)\}/g, (match, name: string) => {
      if (match.startsWith('$$')) return match.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        problems.push(`${formatPath(at, root)}: expected \${NAME} with NAME an environment variable name, found "\${${name}}"`);
        return match;
      }
      const replacement = env[name];
      if (replacement === undefined) {
        problems.push(`${formatPath(at, root)}: refers to the environment variable ${name}, which is not set`);
        return match;
      }
      return replacement;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, problems, [...at, index], root));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env, problems, [...at, key], root)]),
    );
  }
  return value;
}
