// `sealpost keygen`: key files for wallets, the domain authority, the
// domain service's delegate key, and the credential key.
import type { Command } from 'commander';
import { createCredentialKeyFile } from '../../crypto/credential-seal.ts';
import { generateKeypair, writeKeypairFile } from '../../keys/keypair-file.ts';

const KEYPAIRS = {
  wallet: 'a wallet keypair (Solana CLI format)',
  authority: 'the domain authority keypair ([chain] authority_key_file; signs SendMail for relayed mail)',
  delegate: "the domain service's delegate keypair ([chain] delegate_key_file; signs CreateDomain)",
} as const;

export function register(program: Command): void {
  const keygen = program.command('keygen').description('create key files (never overwrites without --force)');

  for (const [kind, what] of Object.entries(KEYPAIRS)) {
    keygen
      .command(`${kind} <file>`)
      .description(`write ${what}, mode 0600; prints its address`)
      .option('--force', 'replace an existing file')
      .action((file: string, opts: { force?: boolean }) => {
        const keypair = generateKeypair();
        writeKeypairFile(file, keypair, { force: opts.force });
        process.stderr.write(`wrote ${kind} keypair ${file} (mode 0600)\n`);
        process.stdout.write(`${keypair.address}\n`);
      });
  }

  keygen
    .command('credential-key <file>')
    .description(
      'write a 32-byte random AES-256 key for sealing stored credentials ([api] credential_key_file)',
    )
    .option('--force', 'replace an existing file (credentials sealed under the old key become unreadable)')
    .action((file: string, opts: { force?: boolean }) => {
      createCredentialKeyFile(file, { force: opts.force });
      process.stderr.write(`wrote credential key ${file} (32 bytes, mode 0600)\n`);
    });
}
