export { AccountsService, toAccountUser } from './accounts.service.js';
export type { AccountUser, NewUser, UserDeletingListener, SignInRevokingListener } from './accounts.service.js';
export type { UserRow } from './accounts.repository.js';
export { accountsRoutes } from './accounts.routes.js';
export { currentAccount } from './current-account.js';
export { passwordResetRoutes } from './password-reset.routes.js';
export { generatePassword, resetPassword } from './password-reset.js';
