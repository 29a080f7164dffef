export { OidcService } from './oidc.service.js';
export type { SsoSignIn } from './oidc.service.js';
export { ssoRoutes } from './sso.routes.js';
