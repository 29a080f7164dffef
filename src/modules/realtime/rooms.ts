/** The room of a base's live clients: only that base's changes and toasts are sent to it. */
export const baseRoom = (baseUuid: string) => `base:${baseUuid}`;

/** The room of one user's sockets (Account-Token grants only): their notifications. */
export const userRoom = (userId: number) => `user:${userId}`;

/**
 * The room of one user's sockets joined through a view share (a view-limited Base-Token): only the
 * view's changes, filtered for that user (view-operations.ts), are sent to it.
 */
export const viewRoom = (baseUuid: string, viewId: string, userId: number) => `view:${baseUuid}:${viewId}:${userId}`;
