// Gets the XML out of a DMARC report attachment: plain XML, gzip (.xml.gz)
// or zip (.zip with one .xml inside), with a hard cap on the decompressed
// size so a zip or gzip bomb stops at the cap instead of filling memory.
// The format is recognized by its magic bytes first; the content type and
// file name only decide between "XML" and "not a report".
import { gunzipSync } from 'node:zlib';
import { Unzip, type UnzipFile, UnzipInflate } from 'fflate';
import { DmarcReportError } from './report-error.ts';

export type ReportFormat = 'xml' | 'gzip' | 'zip';

export interface AttachmentHint {
  contentType?: string;
  filename?: string;
}

const GZIP_MAGIC = [0x1f, 0x8b];
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

function startsWith(bytes: Uint8Array, magic: number[]): boolean {
  return magic.every((b, i) => bytes[i] === b);
}

/** Which format the bytes are, or null when they are no report attachment at all. */
export function detectFormat(bytes: Uint8Array, hint: AttachmentHint = {}): ReportFormat | null {
  if (startsWith(bytes, GZIP_MAGIC)) return 'gzip';
  if (startsWith(bytes, ZIP_MAGIC)) return 'zip';
  const type = (hint.contentType ?? '').toLowerCase();
  const name = (hint.filename ?? '').toLowerCase();
  // An HTML part (a report's pretty rendering) starts with '<' too, but is no report.
  if (type.startsWith('text/html')) return null;
  if (/[/+]xml\b/.test(type) || name.endsWith('.xml')) return 'xml';
  // Some reporters label XML as octet-stream with no useful name.
  const head = new TextDecoder()
    .decode(bytes.subarray(0, 64))
    .replace(/^\uFEFF/, '')
    .trimStart();
  return head.startsWith('<') ? 'xml' : null;
}

function gunzip(bytes: Uint8Array, maxBytes: number): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new DmarcReportError('too_large', `the gzip report expands beyond ${maxBytes} bytes`);
    }
    throw new DmarcReportError('malformed_archive', `the gzip data is damaged: ${(err as Error).message}`);
  }
}

function unzipFirstXml(bytes: Uint8Array, maxBytes: number): Uint8Array {
  // Set from fflate's callbacks, which run synchronously inside push().
  const state = {
    chunks: [] as Uint8Array[],
    total: 0,
    names: [] as string[],
    found: false,
    done: false,
    failure: null as DmarcReportError | null,
  };
  const fail = (code: DmarcReportError['code'], message: string) => {
    state.failure ??= new DmarcReportError(code, message);
  };
  const onFile = (file: UnzipFile) => {
    state.names.push(file.name);
    if (state.found || !file.name.toLowerCase().endsWith('.xml')) return;
    state.found = true;
    // The declared size can lie; it only lets an honest bomb be refused before inflating.
    if (file.originalSize !== undefined && file.originalSize > maxBytes) {
      fail(
        'too_large',
        `${file.name} in the zip declares ${file.originalSize} bytes; the cap is ${maxBytes}`,
      );
      return;
    }
    file.ondata = (err, chunk, final) => {
      if (state.failure || state.done) return;
      if (err) return fail('malformed_archive', `${file.name} in the zip is damaged: ${err.message}`);
      state.total += chunk.length;
      if (state.total > maxBytes) {
        fail('too_large', `${file.name} in the zip expands beyond ${maxBytes} bytes`);
        file.terminate();
        return;
      }
      state.chunks.push(chunk);
      if (final) state.done = true;
    };
    try {
      file.start();
    } catch (err) {
      fail('malformed_archive', `${file.name} uses an unsupported compression: ${(err as Error).message}`);
    }
  };
  const unzip = new Unzip(onFile);
  unzip.register(UnzipInflate);
  try {
    // Fed in slices so a bomb is stopped after little work.
    const step = 64 * 1024;
    for (let i = 0; i < bytes.length && !state.failure && !state.done; i += step) {
      unzip.push(bytes.subarray(i, i + step), i + step >= bytes.length);
    }
  } catch (err) {
    fail('malformed_archive', `the zip archive is damaged: ${(err as Error).message}`);
  }
  if (state.failure) throw state.failure;
  if (!state.found) {
    const listed = state.names.slice(0, 5).join(', ');
    throw new DmarcReportError(
      'not_a_report',
      listed ? `the zip holds no .xml file (found ${listed})` : 'the zip archive holds no files',
    );
  }
  if (!state.done)
    throw new DmarcReportError('malformed_archive', 'the zip archive ends in the middle of the report');
  const out = new Uint8Array(state.total);
  let offset = 0;
  for (const c of state.chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

/** The report's XML bytes; DmarcReportError for unknown formats, damaged archives and bombs. */
export function unpackReport(bytes: Uint8Array, hint: AttachmentHint, maxBytes: number): Uint8Array {
  const format = detectFormat(bytes, hint);
  if (format === null) {
    throw new DmarcReportError(
      'unsupported_format',
      `not a DMARC report attachment (content type ${hint.contentType ?? 'unknown'}, name ${hint.filename ?? 'none'}); expected XML, gzip or zip`,
    );
  }
  if (format === 'gzip') return gunzip(bytes, maxBytes);
  if (format === 'zip') return unzipFirstXml(bytes, maxBytes);
  if (bytes.length > maxBytes)
    throw new DmarcReportError(
      'too_large',
      `the XML report is ${bytes.length} bytes; the cap is ${maxBytes}`,
    );
  return bytes;
}
