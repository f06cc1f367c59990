// A source's failure in words: network codes as sentences naming the target, and never a raw
// JavaScript message (a TypeError or RangeError met on an answer nobody expected).
import { describe, expect, it } from 'vitest';
import { connectionProblem } from '../../lib/sources/errors';

const target = 'Redis at 127.0.0.1:34998';
const coded = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:34998`), { code });

describe('connectionProblem', () => {
  it('names the target and says what a network error means', () => {
    expect(connectionProblem(coded('ECONNREFUSED'), target)).toBe(`${target} refused the connection (is the server running, on that port?)`);
    expect(connectionProblem(coded('ECONNRESET'), target)).toBe(`${target} closed the connection`);
    expect(connectionProblem(new Error('Unknown RESP type 72 "H". Please report this.'), target)).toBe(`${target} answers, but not in its protocol (is that the right port?)`);
  });

  it('turns an error of the JavaScript engine into a sentence about the backend', () => {
    let radix: unknown;
    try {
      (5).toString(Number('latin1'));
    } catch (error) {
      radix = error;
    }
    expect(radix).toBeInstanceOf(RangeError);
    for (const error of [radix, new TypeError("Cannot read properties of undefined (reading 'length')")]) {
      const words = connectionProblem(error, target);
      expect(words).toBe(`${target} gave an answer that could not be read (is that the right server and port?)`);
      expect(words).not.toMatch(/radix|undefined|properties/);
    }
  });

  it('keeps any other error message, redacting URL passwords', () => {
    expect(connectionProblem(new Error('NOAUTH Authentication required.'), target)).toBe(`${target}: NOAUTH Authentication required.`);
    expect(connectionProblem(new Error('bad redis://user:hunter2@127.0.0.1:1/0'), target)).not.toContain('hunter2');
  });
});
