// The Redis key layout shared by the API, the sweep and the cost guard.
import { describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/keys/keypair-file.ts';
import {
  loginChallengeKey,
  normalizeSenderAddress,
  nullSenderPublicationWindowKey,
  rateWindowKey,
  senderPublicationWindowKey,
  stepUpChallengeKey,
  walletLeaseKey,
  walletLeasePattern,
  walletRateWindowPattern,
} from '../../src/core/limits/redis-keys.ts';

describe('redis keys', () => {
  const wallet = generateKeypair().address;

  it('spells every key under the prefix', () => {
    expect(rateWindowKey('sp', 'wallet', wallet, 'api', 60_000)).toBe(`sp:rl:wallet:${wallet}:api:60000`);
    expect(rateWindowKey('sp', 'ip', '::1', 'api', 0)).toBe('sp:rl:ip:::1:api:0');
    expect(walletLeaseKey('sp', wallet, 'submit')).toBe(`sp:lease:${wallet}:submit`);
    expect(walletLeasePattern('sp', wallet)).toBe(`sp:lease:${wallet}:*`);
    expect(walletRateWindowPattern('sp', wallet)).toBe(`sp:rl:wallet:${wallet}:*`);
    expect(nullSenderPublicationWindowKey('sp')).toBe('sp:pubwin:null');
    expect(loginChallengeKey('sp', wallet)).toBe(`sp:auth:login:${wallet}`);
    expect(stepUpChallengeKey('sp', wallet)).toBe(`sp:auth:stepup:${wallet}`);
  });

  it('normalizes sender addresses: wallets keep their case, aliases and domains are lowercased', () => {
    expect(normalizeSenderAddress(`${wallet}@Mail.Example.ORG.`)).toBe(`${wallet}@mail.example.org`);
    expect(normalizeSenderAddress('Alice@Example.org')).toBe('alice@example.org');
    expect(senderPublicationWindowKey('sp', `${wallet}@EXAMPLE.org`)).toBe(
      `sp:pubwin:sender:${wallet}@example.org`,
    );
    expect(() => normalizeSenderAddress('no-at-sign')).toThrow(/not a mail address/);
    expect(() => normalizeSenderAddress('@example.org')).toThrow(/not a mail address/);
  });

  it('refuses wallet values that would widen a SCAN pattern', () => {
    expect(() => walletLeasePattern('sp', '*')).toThrow(/pattern/);
    expect(() => walletRateWindowPattern('sp', 'a?b')).toThrow(/pattern/);
    expect(() => walletRateWindowPattern('sp', '')).toThrow(/pattern/);
  });
});
