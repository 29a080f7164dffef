export { createOutboundHttp, MAX_RESPONSE_BYTES } from './outbound.js';
export type { OutboundErrorKind, OutboundHttp, OutboundHttpOptions, OutboundResult } from './outbound.js';
export { blockedAddressReason } from './ip-policy.js';
