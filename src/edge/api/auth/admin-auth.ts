// Admin authentication of the HTTP listeners (the API's admin routes,
// /metrics): the admin token's verdict (src/core/keys/admin-token.ts) as the
// API's 401 errors.
import { AdminToken } from '../../../core/keys/admin-token.ts';
import { ApiError } from '../errors.ts';

export class AdminAuth extends AdminToken {
  /** Throws a 401 ApiError unless the header carries the admin token. */
  check(authorization: string | undefined): void {
    switch (this.verify(authorization)) {
      case 'ok':
        return;
      case 'unavailable':
        throw new ApiError(
          401,
          'admin_auth_unavailable',
          'this server has no admin token file ([api] admin_token_file); create one with `sealpost admin token`, then `sealpost reload` (or restart)',
        );
      case 'required':
        throw new ApiError(401, 'admin_auth_required', 'send Authorization: Bearer <admin token>');
      case 'failed':
        throw new ApiError(401, 'admin_auth_failed', 'the admin token is not valid');
    }
  }
}
