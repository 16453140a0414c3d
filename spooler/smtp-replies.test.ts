// The RFC 3463 status logged and put in DSNs for a remote reply: the reply's
// own enhanced code when its class agrees, else the class's generic one — a
// plain "250 Ok" is 2.0.0, never a temporary 4.0.0.
import { describe, expect, it } from 'vitest';
import { answer, statusOf } from './smtp-replies.ts';

describe('statusOf', () => {
  it('takes the enhanced code of the reply when its class matches', () => {
    expect(statusOf(250, '250 2.6.0 Message accepted')).toBe('2.6.0');
    expect(statusOf(550, '550-5.1.1 The email account does not exist')).toBe('5.1.1');
    expect(statusOf(451, '451 4.7.1 Greylisted')).toBe('4.7.1');
  });
  it('falls back to the class of the code', () => {
    expect(statusOf(250, '250 Ok: queued as 12345')).toBe('2.0.0');
    expect(statusOf(251, '251 User not local; will forward')).toBe('2.0.0');
    expect(statusOf(554, '554 Transaction failed')).toBe('5.0.0');
    expect(statusOf(421, '421 Service not available')).toBe('4.0.0');
    // A class that disagrees with the code is not trusted.
    expect(statusOf(250, '250 5.0.0 odd')).toBe('2.0.0');
  });
  it('is 4.4.2 for a connection that broke before any reply', () => {
    expect(answer('a@b.example', undefined, undefined, 'connection lost').status).toBe('4.4.2');
  });
});
