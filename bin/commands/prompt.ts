// A secret read from the terminal without echoing it, or from standard input when it is not a
// terminal (`printf '%s' "$PW" | leasehold users add ...`). Never from an argument: arguments
// are visible to every user of the machine (ps) and kept in shell history.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

export async function readSecret(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk as Buffer);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = new Promise<string>((resolve) => rl.question(prompt, resolve));
    muted = true;
    const text = await answer;
    process.stderr.write('\n');
    return text;
  } finally {
    rl.close();
  }
}
