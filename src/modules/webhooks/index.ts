export { createWebhooksModule } from './webhooks.module.js';
export type { WebhooksModule, WebhooksModuleDeps, WebhookTick } from './webhooks.module.js';
export { WebhooksService } from './webhooks.service.js';
export { WebhookDeliveryService, DISABLE_AFTER_FAILURES, MSG_TYPE_WEBHOOK_INVALID } from './delivery.service.js';
export type { WebhookNotifier } from './delivery.service.js';
export { WebhookEventConsumer, WEBHOOKS_CONSUMER } from './webhooks.consumer.js';
export type { WebhookAlertRow } from './webhooks.repository.js';
export { webhooksRoutes } from './webhooks.routes.js';
export { adminWebhooksRoutes } from './admin-webhooks.routes.js';
