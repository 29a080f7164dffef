export { BaseTokenSigner, BASE_TOKEN_TTL_SECONDS } from './base-token.js';
export type { BaseTokenClaims, BaseTokenGrant, BaseTokenSource, VerifyResult } from './base-token.js';
export { BaseTokenVerifier, neverRevoked } from './base-token-verifier.js';
export type { RevocationCheck } from './base-token-verifier.js';
export { AccessTokenService } from './access-token.service.js';
export type { AccessTokenResponse } from './access-token.service.js';
export { tokensRoutes, AccessTokenRecord } from './tokens.routes.js';
