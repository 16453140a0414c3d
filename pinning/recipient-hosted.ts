// hosted_jwt: a Pinata-style pinning API. One multipart upload to
// `{api_url}/pinning/pinFileToIPFS` with the JWT as bearer token, asking for
// CIDv1 on the public network; the CID comes back as `IpfsHash`.

import { DEFAULT_HOSTED_API_URL, type HostedJwtProvider } from '../src/contracts/pin-provider.ts';
import { PinProviderError, type PinResult } from '../src/contracts/pinner.ts';
import { normalizeCid } from '../src/mail/cid.ts';
import { Deadline, expectOk, type FetchFn, transportError } from './http-util.ts';

export async function pinToHosted(
  cfg: HostedJwtProvider,
  bytes: Uint8Array,
  o: { expectedCid: string; name?: string; signal?: AbortSignal; fetch: FetchFn; timeoutMs: number },
): Promise<PinResult> {
  const base = (cfg.api_url ?? DEFAULT_HOSTED_API_URL).replace(/\/+$/, '');
  const name = o.name ?? o.expectedCid;
  const form = new FormData();
  form.append(
    'file',
    new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }),
    name,
  );
  form.append('pinataOptions', JSON.stringify({ cidVersion: 1 }));
  form.append('pinataMetadata', JSON.stringify({ name }));
  form.append('network', 'public');
  const d = new Deadline(o.timeoutMs, o.signal);
  try {
    const res = await o.fetch(`${base}/pinning/pinFileToIPFS`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cfg.jwt}` },
      body: form,
      signal: d.signal,
    });
    await expectOk('hosted_jwt', res);
    const body = (await res.json()) as Record<string, unknown>;
    if (typeof body.IpfsHash !== 'string') {
      throw new PinProviderError('hosted_jwt', res.status, 'answer carries no "IpfsHash"');
    }
    let cid: string;
    try {
      cid = normalizeCid(body.IpfsHash);
    } catch {
      throw new PinProviderError('hosted_jwt', res.status, `answer carries a malformed CID ${body.IpfsHash}`);
    }
    return { cid, size: bytes.byteLength };
  } catch (err) {
    throw transportError('hosted_jwt', err, d);
  }
}
