/** The room of a base's live clients: only that base's changes and toasts are sent to it. */
export const baseRoom = (baseUuid: string) => `base:${baseUuid}`;

/** The room of one user's sockets (Account-Token grants only): their notifications. */
export const userRoom = (userId: number) => `user:${userId}`;
