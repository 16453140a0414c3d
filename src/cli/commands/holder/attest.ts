// `sealpost attest` and `sealpost reputation` (docs/protocol.md, "Sender
// attestations and reputation"): a domain authority attests or revokes a
// sender wallet, anyone lists a domain's attestations; a wallet's reputation
// is shown, and a recipient sets or closes the postage rule reputable
// senders get.
import type { Command } from 'commander';
import {
  getAttestation,
  getRecipientRule,
  getReputation,
  listAttestations,
} from '../../../../chain/client/attest-client.ts';
import { getDomain } from '../../../../chain/client/client.ts';
import { normalizeDomain } from '../../../../chain/client/hash.ts';
import {
  attestSenderInstruction,
  closeRecipientRuleInstruction,
  revokeAttestationInstruction,
  setRecipientRuleInstruction,
} from '../../../../chain/client/instructions.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { addChainOptions, type ChainOpts, chainOf, send } from '../chain-cli.ts';
import { addressOption, loadKeypair } from '../operate/program-common.ts';

/** A DNS name as the program stores it (lowercase, A-labels decoded); bad names are a usage error. */
function domainOption(value: string): string {
  try {
    return normalizeDomain(value);
  } catch (err) {
    throw new CliError(`--domain: ${(err as Error).message}`, EXIT_USAGE);
  }
}

/** Lamports as a decimal integer (u64). */
function lamportsOption(name: string, value: string): bigint {
  if (!/^\d{1,20}$/.test(value) || BigInt(value) > 0xffff_ffff_ffff_ffffn)
    throw new CliError(`${name}: expected lamports as a whole number, got "${value}"`, EXIT_USAGE);
  return BigInt(value);
}

const wallet = addressOption('wallet address');

export function register(program: Command): void {
  const attest = program
    .command('attest')
    .description("sender attestations: a domain authority vouches for a wallet as its domain's sender");

  addChainOptions(
    attest
      .command('add')
      .description('attest a wallet as a sender of the domain (signed by the domain authority key)')
      .requiredOption('--domain <name>', 'the mail domain')
      .requiredOption('--wallet <base58>', 'the sender wallet', wallet)
      .requiredOption('-k, --key <file>', "the domain authority's keypair file (signs; pays unless --payer)")
      .option('--payer <file>', 'keypair file that pays the rent instead'),
  ).action(async (opts: ChainOpts & { domain: string; wallet: string; key: string; payer?: string }) => {
    const domain = domainOption(opts.domain);
    const key = loadKeypair('--key', opts.key);
    const payer = opts.payer ? loadKeypair('--payer', opts.payer) : key;
    const { conn, programId } = await chainOf(opts);
    const md = await getDomain(conn, programId, domain);
    if (!md) throw new CliError(`${domain} is not a mail domain on this chain`);
    const ix = attestSenderInstruction({
      programId,
      authority: key.publicKey,
      payer: payer.publicKey,
      domain,
      wallet: opts.wallet,
    });
    const signature = await send(conn, payer, ix, 'AttestSender', [key]);
    process.stdout.write(`attested ${opts.wallet} as a sender of ${domain} (${signature})\n`);
  });

  addChainOptions(
    attest
      .command('revoke')
      .description(
        'revoke an attestation (the domain authority or the attested wallet signs); rent back to its payer',
      )
      .requiredOption('--domain <name>', 'the mail domain')
      .requiredOption('--wallet <base58>', 'the attested wallet', wallet)
      .requiredOption('-k, --key <file>', 'keypair file of the domain authority or of the attested wallet'),
  ).action(async (opts: ChainOpts & { domain: string; wallet: string; key: string }) => {
    const domain = domainOption(opts.domain);
    const key = loadKeypair('--key', opts.key);
    const { conn, programId } = await chainOf(opts);
    const att = await getAttestation(conn, programId, domain, opts.wallet);
    if (!att) throw new CliError(`${opts.wallet} is not attested for ${domain}`);
    const ix = revokeAttestationInstruction({
      programId,
      signer: key.publicKey,
      domain,
      wallet: opts.wallet,
      rentPayer: att.rentPayer,
    });
    const signature = await send(conn, key, ix, 'RevokeAttestation');
    process.stdout.write(`revoked the attestation of ${opts.wallet} for ${domain} (${signature})\n`);
  });

  addChainOptions(
    attest
      .command('list')
      .description("list a domain's attested senders (those signed by a former authority are marked stale)")
      .requiredOption('--domain <name>', 'the mail domain')
      .option('--json', 'print a JSON array on stdout'),
  ).action(async (opts: ChainOpts & { domain: string; json?: boolean }) => {
    const domain = domainOption(opts.domain);
    const { conn, programId } = await chainOf(opts);
    const rows = (await listAttestations(conn, programId, domain)).map(({ address, account, counts }) => ({
      wallet: account.wallet.toBase58(),
      address: address.toBase58(),
      authority: account.authority.toBase58(),
      attestedAt: Number(account.attestedAt),
      counts,
    }));
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    for (const r of rows)
      process.stdout.write(
        `${r.wallet} attested ${new Date(r.attestedAt * 1000).toISOString()}${r.counts ? '' : ' (stale)'}\n`,
      );
  });

  const reputation = program
    .command('reputation')
    .description('sender reputation (first-contact postage paid) and recipient postage rules');

  addChainOptions(
    reputation
      .command('show')
      .description("a wallet's cumulative first-contact postage and the rule its mailbox sets, if any")
      .argument('<wallet>', 'the wallet address', wallet)
      .option('--json', 'print JSON on stdout'),
  ).action(async (who: string, opts: ChainOpts & { json?: boolean }) => {
    const { conn, programId } = await chainOf(opts);
    const [rep, rule] = await Promise.all([
      getReputation(conn, programId, who),
      getRecipientRule(conn, programId, who),
    ]);
    const out = {
      wallet: who,
      cumulativeSpendLamports: (rep?.cumulativeSpendLamports ?? 0n).toString(),
      updatedAt: rep ? Number(rep.updatedAt) : null,
      rule: rule
        ? {
            minReputationLamports: rule.minReputationLamports.toString(),
            postageLamports: rule.postageLamports.toString(),
          }
        : null,
    };
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      return;
    }
    process.stdout.write(`${who} paid ${out.cumulativeSpendLamports} lamports of first-contact postage\n`);
    if (out.rule)
      process.stdout.write(
        `rule: senders with at least ${out.rule.minReputationLamports} pay ${out.rule.postageLamports} lamports instead of a stamp\n`,
      );
  });

  addChainOptions(
    reputation
      .command('rule')
      .description(
        "set the key's postage rule: senders whose reputation reaches --min pay --postage (0 = free) instead of a stamp",
      )
      .requiredOption('-k, --key <file>', 'the mailbox owner keypair file (signs and pays)')
      .option('--min <lamports>', 'reputation threshold (at least 1)')
      .option('--postage <lamports>', 'postage such senders pay per message (0 waives it)', '0')
      .option('--close', 'close the rule instead and take its rent back'),
  ).action(async (opts: ChainOpts & { key: string; min?: string; postage: string; close?: boolean }) => {
    const key = loadKeypair('--key', opts.key);
    if (opts.close) {
      const { conn, programId } = await chainOf(opts);
      const signature = await send(
        conn,
        key,
        closeRecipientRuleInstruction({ programId, owner: key.publicKey }),
        'CloseRecipientRule',
      );
      process.stdout.write(`closed the postage rule of ${key.publicKey.toBase58()} (${signature})\n`);
      return;
    }
    if (opts.min === undefined) throw new CliError('--min is required (or --close)', EXIT_USAGE);
    const min = lamportsOption('--min', opts.min);
    if (min === 0n) throw new CliError('--min: must be at least 1', EXIT_USAGE);
    const postage = lamportsOption('--postage', opts.postage);
    const { conn, programId } = await chainOf(opts);
    const ix = setRecipientRuleInstruction({
      programId,
      owner: key.publicKey,
      minReputationLamports: min,
      postageLamports: postage,
    });
    const signature = await send(conn, key, ix, 'SetRecipientRule');
    process.stdout.write(`set the postage rule of ${key.publicKey.toBase58()} (${signature})\n`);
  });
}
