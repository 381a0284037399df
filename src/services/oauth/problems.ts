/** The error codes of RFC 6749 §5.2, RFC 7591 §3.2.2 and RFC 8707 that we answer with. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_target'
  | 'invalid_client_metadata'
  | 'invalid_redirect_uri'
  | 'temporarily_unavailable';

/** An OAuth protocol error: sent as `{error, error_description}`, not as the API's Error body. */
export class OAuthProblem extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    description: string,
    readonly status = 400,
  ) {
    super(description);
  }

  toBody(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

export const invalidGrant = (description: string) => new OAuthProblem('invalid_grant', description);
