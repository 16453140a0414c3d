// The one error DMARC report handling raises, with a stable code the ingest
// result and the logs carry.

export type DmarcReportErrorCode =
  | 'unsupported_format'
  | 'too_large'
  | 'malformed_archive'
  | 'malformed_xml'
  | 'not_a_report'
  | 'invalid_report'
  | 'foreign_domain';

export class DmarcReportError extends Error {
  constructor(
    readonly code: DmarcReportErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DmarcReportError';
  }
}
