// Pinning a sealed body on the pin service: `POST {pin}/pins` with the raw
// bytes, an optional bearer token, answer `201 {cid, size}`.
export class PinServiceError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'PinServiceError';
  }
}

export async function pinBytes(
  pinUrl: string,
  token: string,
  bytes: Uint8Array,
  fetchImpl: typeof fetch = fetch,
): Promise<string> {
  const url = `${pinUrl.replace(/\/+$/, '')}/pins`;
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetchImpl(url, { method: 'POST', headers, body: bytes as BodyInit });
  } catch {
    throw new PinServiceError(
      `The pin service at ${pinUrl} does not answer. Check the pin URL in Settings.`,
      null,
    );
  }
  const text = await res.text();
  if (res.status === 401 || res.status === 403) {
    throw new PinServiceError(
      'The pin service refused the bearer token. Check the pin token in Settings.',
      res.status,
    );
  }
  if (res.status === 413)
    throw new PinServiceError('The message is larger than the pin service accepts.', 413);
  if (res.status !== 201 && res.status !== 200) {
    throw new PinServiceError(`The pin service answered ${res.status}: ${text.slice(0, 200)}`, res.status);
  }
  let body: { cid?: unknown };
  try {
    body = JSON.parse(text) as { cid?: unknown };
  } catch {
    throw new PinServiceError('The pin service answered something that is not JSON.', res.status);
  }
  if (typeof body.cid !== 'string')
    throw new PinServiceError('The pin service did not say which CID it pinned.', res.status);
  return body.cid;
}
