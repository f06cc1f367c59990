// 401 and 403, in the API's error shape (lib/errors.ts shows a RequestError as it is).
import { RequestError } from '../errors';

export class AuthError extends RequestError {
  constructor(
    readonly status: 401 | 403 | 429,
    readonly code: string,
    message: string,
    override readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AuthError';
  }
}
