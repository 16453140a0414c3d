// Reading a no_ipfs (local-only) message from the terminal. Its Email
// account's cid is the `b3:` marker and the sealed object lives only in the
// operator's store, which the account API serves to the recipient alone
// (`GET /v1/mail/by-email/{address}/sealed`). The way in is a bearer token
// the holder already has (--token, --token-file, $SEALPOST_API_TOKEN) or one
// got by logging in with the wallet key (./account-api.ts, as `sealpost
// account` does). The fetched bytes must hash to the marker before anything
// opens them: the operator's copy is trusted no more than a gateway's.
import { readFileSync } from 'node:fs';
import type { Config } from '../../../core/config/types.ts';
import { readKeypairFile } from '../../../core/keys/keypair-file.ts';
import { checkCid } from '../../../mail/seal/index.ts';
import { CliError, EXIT_USAGE } from '../../common.ts';
import { AccountApi, apiBaseUrl } from '../operate/account-api.ts';

export const API_TOKEN_ENV = 'SEALPOST_API_TOKEN';

export interface StoreAccessOptions {
  api?: string;
  token?: string;
  tokenFile?: string;
  login?: boolean;
  key?: string;
}

export interface StoreAccess {
  api: AccountApi;
  /** Where the token comes from, for messages: `--token`, `--token-file FILE`, `$SEALPOST_API_TOKEN`, `login`. */
  how: string;
  /** Log in with the wallet key before fetching. */
  login: boolean;
  /** The wallet the token is for (its `sub`), when it can be read. */
  tokenWallet: string | null;
}

/** How a local-only message can be read, for the lines that say it cannot be yet. */
export const STORE_ACCESS_HINT =
  `fetch it from the operator's account API with --login (signs in with --key) or a token ` +
  `(--token-file FILE, --token TOKEN or $${API_TOKEN_ENV}), and --api URL unless the config names the API`;

/** The `sub` of a JWT, read without verifying (the server verifies); null when it is not a readable JWT. */
function tokenSubject(token: string): string | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : null;
  } catch {
    return null;
  }
}

function readTokenFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read --token-file ${file}: ${(err as Error).message}`);
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token))
    throw new CliError(`--token-file ${file} must hold one token on one line`, EXIT_USAGE);
  return token;
}

/**
 * The way to the operator's store, or null when none was given. Order: an
 * explicit token (--token, --token-file), then --login, then
 * $SEALPOST_API_TOKEN, then --api with --key (which logs in).
 */
export function storeAccess(
  opts: StoreAccessOptions,
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): StoreAccess | null {
  if (opts.token !== undefined && opts.tokenFile !== undefined)
    throw new CliError('give --token or --token-file, not both', EXIT_USAGE);
  if (opts.login && (opts.token !== undefined || opts.tokenFile !== undefined))
    throw new CliError('give --login or a token, not both', EXIT_USAGE);
  let token: string | null = null;
  let how = '';
  if (opts.token !== undefined) {
    token = opts.token.trim();
    how = '--token';
    if (token === '') throw new CliError('--token is empty', EXIT_USAGE);
  } else if (opts.tokenFile !== undefined) {
    token = readTokenFile(opts.tokenFile);
    how = `--token-file ${opts.tokenFile}`;
  } else if (!opts.login && env[API_TOKEN_ENV]?.trim()) {
    token = (env[API_TOKEN_ENV] as string).trim();
    how = `$${API_TOKEN_ENV}`;
  }
  const login = token === null && (opts.login === true || (opts.api !== undefined && opts.key !== undefined));
  if (token === null && !login) return null;
  if (login && !opts.key)
    throw new CliError('--login signs in with the wallet key: give --key FILE (or use a token)', EXIT_USAGE);
  const key = login ? readKeypairFile(opts.key as string) : null;
  const target = apiBaseUrl(config, opts.api);
  return {
    api: new AccountApi(target, key, token),
    how: login ? `login as ${key?.address}` : how,
    login,
    tokenWallet: key ? key.address : token ? tokenSubject(token) : null,
  };
}

/**
 * The sealed object of a local-only message from the operator's store,
 * refused unless its BLAKE3 is the chain's marker. Nothing is opened here.
 */
export async function fetchFromStore(
  access: StoreAccess,
  msg: { address: string; marker: string; recipient: string },
  limits: { maxBytes: number; timeoutMs: number },
): Promise<Uint8Array> {
  const url = access.api.target.url;
  if (access.tokenWallet !== null && access.tokenWallet !== msg.recipient) {
    throw new CliError(
      `the API token (${access.how}) is for wallet ${access.tokenWallet}, but message ${msg.address} is addressed to ${msg.recipient}: ` +
        "only the recipient's own token fetches its local-only mail",
    );
  }
  process.stderr.write(`fetching the sealed body from the operator's store at ${url} (${access.how})\n`);
  if (access.login) await access.api.login();
  const path = `/v1/mail/by-email/${encodeURIComponent(msg.address)}/sealed`;
  const got = await access.api.getBytes(path, limits);
  if ('refused' in got) {
    const { status, body } = got.refused;
    if (status === 401)
      throw new CliError(
        `the account API at ${url} refused the token (${access.how}; 401 ${body?.error ?? ''}): it has expired (tokens last an hour), ` +
          'was revoked, or is not from this server; log in again (--login with --key) or get a fresh token',
      );
    if (status === 404)
      throw new CliError(
        `the account API at ${url} holds no message ${msg.address} for ${access.tokenWallet ? `wallet ${access.tokenWallet}` : 'the token’s wallet'} ` +
          '(404): a local-only message is served only to its recipient, by the server that delivered it, until it is deleted there',
      );
    AccountApi.refuse(got.refused, `the sealed body of ${msg.address}`);
  }
  const check = await checkCid(msg.marker, got.bytes);
  if (check !== 'match') {
    throw new CliError(
      `the sealed bytes the operator's store at ${url} served for message ${msg.address} do not match its marker ${msg.marker} on chain; refusing them, nothing was opened`,
    );
  }
  return got.bytes;
}
