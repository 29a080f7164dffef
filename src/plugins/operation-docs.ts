/**
 * A summary and a description for every operation of the API reference (/api/docs/), by OpenAPI
 * path. A route's own schema `summary` / `description` win; these fill what a route leaves out, so
 * the texts of the whole API can be read (and corrected) in one place. `test/http/openapi-docs.test.ts`
 * checks that every operation has both and that no entry here names a route that does not exist.
 */
type Doc = [summary: string, description: string];

const WS = '/api/v2.1/workspace/{workspace_id}/dtable/{base_name}';
const GW = '/api-gateway/api/v2/dtables/{base_uuid}';

export const OPERATION_DOCS: Record<string, Doc> = {
  // Service
  'GET /ping/': ['Ping', 'Answers `"pong"` without authentication: the server is up.'],
  'GET /api2/ping/': ['Ping (api2)', 'The same as `/ping/` under the `api2` prefix the SDKs use.'],
  'GET /server-info/': ['Server information', 'Version and features of this server, as the original reports them.'],
  'GET /health/live/': ['Liveness', 'The process answers (for orchestrators); checks nothing else.'],
  'GET /health/ready/': ['Readiness', 'The database (and Redis when configured) answer: the instance can take traffic. 503 otherwise.'],

  // Accounts
  'POST /api2/auth-token/': ['Sign in', 'Exchanges an e-mail (`username`) and password for the Account-Token. Wrong guesses are slowed down and locked out per account and address.'],
  'GET /api/v2.1/user/': ['Your account', 'Name, e-mail and settings of the signed-in user.'],
  'PUT /api/v2.1/user/': ['Change your account', 'Changes the signed-in user\'s name or e-mail notification setting.'],
  'PUT /api/v2.1/user/password/': ['Change your password', 'Needs the old password; the Account-Token is rotated, so other sessions are signed out.'],
  'POST /api2/logout/': ['Sign out', 'Revokes the Account-Token used for the call.'],
  'GET /api/v2.1/admin/users/': ['List users (admin)', 'Every user with their status; paged. System admins only.'],
  'POST /api/v2.1/admin/users/': ['Create a user (admin)', 'A new user with e-mail, name and password, optionally a system admin.'],
  'PUT /api/v2.1/admin/users/{email}/': ['Change a user (admin)', 'Name, admin flag or active state of a user; deactivation signs them out.'],
  'DELETE /api/v2.1/admin/users/{email}/': ['Delete a user (admin)', 'Deletes the user with their bases and tokens.'],

  // Bases
  'GET /api/v2.1/trash-dtables/': ['List deleted bases', 'The caller\'s deleted bases, restorable until the trash retention ends.'],
  'DELETE /api/v2.1/trash-dtables/': ['Empty the base trash', 'Deletes the caller\'s deleted bases for good.'],
  'PUT /api/v2.1/trash-dtables/{base_id}/': ['Restore a deleted base', 'Brings a base back from the trash into its workspace.'],
  'DELETE /api/v2.1/trash-dtables/{base_id}/': ['Delete a base for good', 'Removes one base from the trash.'],
  'GET /api/v2.1/workspaces/': ['List workspaces and bases', 'The caller\'s workspaces with their bases, and the bases shared with them.'],
  'POST /api/v2.1/dtables/': ['Create a base', 'A new base (`Table1` with a `Name` column and a default view) in the caller\'s workspace.'],
  'POST /api/v2.1/dtable-copy/': ['Copy a base', 'Copies a base the caller can read into a workspace of their own.'],
  'PUT /api/v2.1/workspace/{workspace_id}/dtable/': ['Rename a base', 'Gives a base of the workspace a new name.'],
  'DELETE /api/v2.1/workspace/{workspace_id}/dtable/': ['Delete a base', 'Moves a base to the trash.'],

  // Sharing and external links
  [`GET ${WS}/share/`]: ['List shares of a base', 'The users the base is shared with and their permission.'],
  [`POST ${WS}/share/`]: ['Share a base', 'Shares the base with a user as read-only (`r`), read-write (`rw`) or admin.'],
  [`PUT ${WS}/share/`]: ['Change a share', 'Changes the permission of a user the base is shared with.'],
  [`DELETE ${WS}/share/`]: ['Unshare a base', 'Removes a user\'s access to the base.'],
  [`GET ${WS}/external-links/`]: ['List external links', 'The base\'s read-only links for people without an account.'],
  [`POST ${WS}/external-links/`]: ['Create an external link', 'A read-only link to the base, optionally with a password and an expiry.'],
  [`DELETE ${WS}/external-links/{token}/`]: ['Delete an external link', 'The link stops working at once.'],

  // Tokens
  [`GET ${WS}/access-token/`]: ['Base-Token for a user', 'A Base-Token (3 days) for the signed-in user\'s permission on the base, for the `api-gateway` routes.'],
  'GET /api/v2.1/dtable/app-access-token/': ['Base-Token for an API-Token', 'Exchanges an API-Token (`Authorization: Token <api token>`) for a Base-Token of its base.'],
  'GET /api/v2.1/external-link-tokens/{external_link_token}/access-token/': ['Base-Token for an external link', 'A read-only Base-Token for the base behind an external link (`X-Link-Password` when it has one).'],
  [`GET ${WS}/temp-api-token/`]: ['Temporary API-Token', 'An API-Token valid for one hour, with the caller\'s permission.'],
  [`GET ${WS}/api-tokens/`]: ['List API-Tokens', 'The base\'s API-Tokens (never the secrets), with permission and last access.'],
  [`POST ${WS}/api-tokens/`]: ['Create an API-Token', 'A token for a program (`app_name`, permission `r` or `rw`); the secret is shown only in this answer.'],
  [`PUT ${WS}/api-tokens/{app_name}/`]: ['Change an API-Token', 'Changes the permission of an API-Token.'],
  [`DELETE ${WS}/api-tokens/{app_name}/`]: ['Delete an API-Token', 'The token and the Base-Tokens obtained with it stop working.'],
  [`POST ${WS}/api-tokens/{app_name}/rotate/`]: ['Rotate an API-Token', 'A new secret for the token; the old one stops working.'],

  // Base data
  'GET /api-gateway/api/v2/ping/': ['Ping the gateway', 'Answers `"pong"`: the base API is up.'],
  [`GET ${GW}/`]: ['The whole base', 'Every table with its rows and the metadata, as one document (cached per revision).'],
  [`GET ${GW}/metadata/`]: ['Base metadata', 'Tables, columns and views of the base.'],
  [`GET ${GW}/rows/`]: ['List rows', 'Rows of a table or view, filtered and sorted as the view is; `start`/`limit` (at most 1,000) page them, `convert_keys` keys cells by column name.'],
  [`POST ${GW}/rows/`]: ['Append rows', 'Up to 1,000 rows in one write; cells by column name or key.'],
  [`PUT ${GW}/rows/`]: ['Update rows', 'Changes cells of up to 1,000 rows in one write.'],
  [`DELETE ${GW}/rows/`]: ['Delete rows', 'Deletes up to 10,000 rows by id in one write (restorable from the row trash).'],
  [`GET ${GW}/rows/{row_id}/`]: ['Get a row', 'One row of a table by its id.'],
  [`GET ${GW}/filtered-rows/`]: ['Filter rows', 'Rows matching filters given in the query.'],
  [`POST ${GW}/filtered-rows/`]: ['Filter rows (body)', 'Rows matching the filters in the body: predicates per column type, And/Or.'],
  [`POST ${GW}/links/`]: ['Link rows', 'Links a row to rows of another table through a link column.'],
  [`PUT ${GW}/links/`]: ['Replace links', 'Sets the rows a row links to (batch form: several rows at once).'],
  [`DELETE ${GW}/links/`]: ['Unlink rows', 'Removes links between rows.'],
  [`POST ${GW}/query-links/`]: ['Read links', 'The linked row ids of rows in a link column.'],
  [`POST ${GW}/tables/`]: ['Create a table', 'A new table, optionally with columns.'],
  [`PUT ${GW}/tables/`]: ['Rename a table', 'Gives a table a new name.'],
  [`DELETE ${GW}/tables/`]: ['Delete a table', 'Deletes a table with its rows and links.'],
  [`POST ${GW}/tables/duplicate-table/`]: ['Duplicate a table', 'Copies a table\'s columns and views, with or without its rows.'],
  [`GET ${GW}/columns/`]: ['List columns', 'The columns of a table (those a view shows with `view_name`).'],
  [`POST ${GW}/columns/`]: ['Add a column', 'A new column of a type, with its data (options, format, formula…).'],
  [`PUT ${GW}/columns/`]: ['Change a column', 'By `op_type`: rename, resize, freeze, move, change type or data.'],
  [`DELETE ${GW}/columns/`]: ['Delete a column', 'Deletes a column and its cells; filters and views naming it follow.'],
  [`POST ${GW}/batch-append-columns/`]: ['Add columns', 'Up to 500 columns in one write.'],
  [`GET ${GW}/views/`]: ['List views', 'The views of a table.'],
  [`POST ${GW}/views/`]: ['Create a view', 'A new view, optionally with filters, sorts, group-bys and hidden columns.'],
  [`GET ${GW}/views/{view_name}/`]: ['Get a view', 'One view with its filters, sorts, group-bys and hidden columns.'],
  [`PUT ${GW}/views/{view_name}/`]: ['Change a view', 'Name, lock, filters, sorts, group-bys or hidden columns; absent fields stay.'],
  [`DELETE ${GW}/views/{view_name}/`]: ['Delete a view', 'Deletes a view (not the last of a table).'],
  [`POST ${GW}/column-options/`]: ['Add select options', 'Adds options to a single- or multiple-select column.'],
  [`PUT ${GW}/column-options/`]: ['Change select options', 'Renames or recolours options (by id, or by name).'],
  [`DELETE ${GW}/column-options/`]: ['Delete select options', 'Removes options; cells holding them are cleared.'],
  [`POST ${GW}/column-cascade-settings/`]: ['Cascade select options', 'Which options of a child select column each parent option allows.'],
  [`POST ${GW}/batch-append-rows/`]: ['Append rows (batch)', 'The older name of appending rows.'],
  [`PUT ${GW}/lock-rows/`]: ['Lock rows', 'Locked rows cannot be changed until unlocked.'],
  [`PUT ${GW}/unlock-rows/`]: ['Unlock rows', 'Allows changes to the rows again.'],
  [`POST ${GW}/add-archived-rows/`]: ['Append archived rows', 'Rows stored as archived (the original\'s big-data store).'],
  [`POST ${GW}/insert-archived-rows/`]: ['Append archived rows (alias)', 'The same as `add-archived-rows/`.'],
  [`POST ${GW}/sql`]: ['Query or change rows with SQL', 'SELECT, INSERT, UPDATE and DELETE over the base\'s tables in SeaTable\'s SQL dialect; parameterized, allow-listed, bounded.'],
  [`POST ${GW}/ui-toasts`]: ['Send a toast', 'Shows a message to the live clients of the base.'],

  // Webhooks and change feed
  [`GET ${WS}/webhooks/`]: ['List webhooks', 'The base\'s webhooks with their state (enabled, disabled and why).'],
  [`POST ${WS}/webhooks/`]: ['Create a webhook', 'A URL that receives the base\'s changes, signed with the secret; optionally only some tables, columns, events or rows.'],
  [`PUT ${WS}/webhooks/{webhook_id}/`]: ['Change a webhook', 'URL, secret, subscription, pacing or enabled state.'],
  [`DELETE ${WS}/webhooks/{webhook_id}/`]: ['Delete a webhook', 'Stops deliveries and removes the webhook with its log.'],
  [`GET ${WS}/webhooks/{webhook_id}/deliveries/`]: ['Delivery log', 'Each delivery attempt: time, HTTP status, latency and a response excerpt; paged.'],
  [`GET ${WS}/webhooks/{webhook_id}/stats/`]: ['Delivery statistics', 'Success rate, p50/p99 latency and backlog over the last hour or day.'],
  [`POST ${WS}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver/`]: ['Redeliver one delivery', 'Sends a logged delivery again.'],
  [`POST ${WS}/webhooks/{webhook_id}/redeliver/`]: ['Redeliver failed deliveries', 'Queues the webhook\'s failed deliveries again.'],
  [`POST ${WS}/webhooks/{webhook_id}/replay/`]: ['Replay changes', 'Delivers the base\'s changes again from a point in time or event id.'],
  [`POST ${WS}/webhooks/{webhook_id}/rotate-secret/`]: ['Rotate the secret', 'A new signing secret; for a while both old and new signatures are sent.'],
  [`POST ${WS}/webhooks/{webhook_id}/dry-run/`]: ['Dry-run a subscription', 'Which recent changes the webhook\'s filters would deliver, without sending.'],
  [`POST ${WS}/webhooks/{webhook_id}/ping/`]: ['Ping a webhook', 'Sends a test delivery to the URL and reports the answer.'],
  [`GET ${GW}/changes/`]: ['Change feed', 'The base\'s changes after a cursor, filtered like a webhook; long poll with `wait`.'],
  [`GET ${GW}/changes/stream/`]: ['Change stream (SSE)', 'The same changes as server-sent events, resumable with `Last-Event-ID`.'],

  // Notifications and rules
  [`GET ${WS}/notification-rules/`]: ['List notification rules', 'The base\'s rules (row added, modified, filters satisfied, near deadline) and whether they are valid.'],
  [`POST ${WS}/notification-rules/`]: ['Create a notification rule', 'A rule that notifies users (or users in a column) when its trigger fires.'],
  [`PUT ${WS}/notification-rules/{rule_id}/`]: ['Change a notification rule', 'Trigger, filters, users or message of a rule.'],
  [`DELETE ${WS}/notification-rules/{rule_id}/`]: ['Delete a notification rule', 'The rule stops notifying.'],
  'GET /api/v2.1/admin/notification-rules/': ['List all rules (admin)', 'Notification rules across the system; paged.'],
  'DELETE /api/v2.1/admin/notification-rules/{rule_id}/': ['Delete a rule (admin)', 'Deletes any notification rule.'],
  'GET /api/v2.1/admin/invalid-notification-rules/': ['List invalid rules (admin)', 'Rules that name a table, view, column or user that no longer exists.'],
  'DELETE /api/v2.1/admin/invalid-notification-rules/': ['Delete invalid rules (admin)', 'Deletes every invalid notification rule.'],
  'GET /api/v2.1/notifications/': ['Your notifications', 'The signed-in user\'s inbox, newest first, with the unread count; paged.'],
  'PUT /api/v2.1/notifications/': ['Mark all read', 'Marks every notification of the user as seen.'],
  'DELETE /api/v2.1/notifications/': ['Clear notifications', 'Deletes the user\'s notifications.'],
  'PUT /api/v2.1/notification/': ['Mark one read', 'Marks one notification as seen.'],
  [`GET ${GW}/notifications/`]: ['Your notifications (Base-Token)', 'The inbox of the Base-Token\'s user.'],
  [`PUT ${GW}/notifications/`]: ['Mark all read (Base-Token)', 'Marks every notification of the Base-Token\'s user as seen.'],
  [`DELETE ${GW}/notifications/`]: ['Clear notifications (Base-Token)', 'Deletes the Base-Token user\'s notifications.'],
  [`PUT ${GW}/notifications/{notification_id}/`]: ['Mark one read (Base-Token)', 'Marks one notification as seen.'],

  // Automations
  [`GET ${WS}/automation-rules/`]: ['List automations', 'The base\'s automation rules with their trigger, actions and validity.'],
  [`POST ${WS}/automation-rules/`]: ['Create an automation', 'A trigger (row change, filters satisfied, schedule) with actions (notify, change rows, e-mail, webhook).'],
  [`PUT ${WS}/automation-rules/{automation_rule_id}/`]: ['Change an automation', 'Trigger, actions or enabled state of a rule.'],
  [`DELETE ${WS}/automation-rules/{automation_rule_id}/`]: ['Delete an automation', 'The rule stops running.'],
  [`GET ${WS}/automation-rules/{automation_rule_id}/runs/`]: ['Automation runs', 'The rule\'s run log: time, trigger, outcome of each action.'],
  'GET /api/v2.1/admin/automation-rules/': ['List all automations (admin)', 'Automation rules across the system; paged.'],
  'DELETE /api/v2.1/admin/automation-rules/{automation_rule_id}/': ['Delete an automation (admin)', 'Deletes any automation rule.'],
  'GET /api/v2.1/admin/invalid-automation-rules/': ['List invalid automations (admin)', 'Rules that name something that no longer exists.'],
  'DELETE /api/v2.1/admin/invalid-automation-rules/': ['Delete invalid automations (admin)', 'Deletes every invalid automation rule.'],

  // Collaborators
  'GET /api2/account/info/': ['Account info', 'The caller\'s account as the SDKs read it.'],
  [`GET ${GW}/related-users/`]: ['Users of a base', 'Everyone with access to the base (owner and shares): id, name, e-mail, avatar.'],
  'GET /api/v2.1/dtables/{base_uuid}/related-users/': ['Users of a base (web API)', 'The same list for an Account-Token or a Base-Token.'],
  'GET /api/v2.1/dtables/{base_uuid}/departments/': ['Departments of a base', 'Always empty: departments are not modelled.'],
  [`GET ${WS}/related-users/`]: ['Users of a base (by name)', 'The base\'s users, the base named by workspace and name.'],
  'GET /api/v2.1/dtable/app-user-info/': ['User info for an API-Token', 'Users of the API-Token\'s base by e-mail.'],

  // Comments
  [`GET ${GW}/comments/`]: ['List comments', 'A row\'s comments (or a table\'s), newest first; paged.'],
  [`POST ${GW}/comments/`]: ['Add a comment', 'Comments on a row; `@` mentions notify the users named.'],
  [`GET ${GW}/comments-count/`]: ['Count comments', 'How many comments a row has.'],
  [`GET ${GW}/comments-within-days/`]: ['Recent comments', 'The base\'s comments of the last days.'],
  [`GET ${GW}/comments/{comment_id}/`]: ['Get a comment', 'One comment by id.'],
  [`PUT ${GW}/comments/{comment_id}/`]: ['Edit a comment', 'Changes one\'s own comment.'],
  [`DELETE ${GW}/comments/{comment_id}/`]: ['Delete a comment', 'Deletes one\'s own comment.'],
  'POST /api/v2.1/dtables/{base_uuid}/comments/': ['Add a comment (web API)', 'The same as the gateway route, with an Account-Token or a Base-Token.'],
  'GET /api/v2.1/dtables/{base_uuid}/rows-comments-num/': ['Comments per row', 'The number of comments of each commented row of a table.'],

  // Admin
  'GET /api/v2.1/admin/rate-limits/': ['Rate limits (admin)', 'The default limits per class and the per-base overrides.'],
  'GET /api/v2.1/admin/rate-limits/bases/{base_uuid}/': ['A base\'s rate limits (admin)', 'The limits in force for one base.'],
  'PUT /api/v2.1/admin/rate-limits/bases/{base_uuid}/': ['Override a base\'s limits (admin)', 'Sets per-base limits that replace the defaults.'],
  'DELETE /api/v2.1/admin/rate-limits/bases/{base_uuid}/': ['Remove an override (admin)', 'The base falls back to the default limits.'],
  'GET /api/v2.1/admin/webhooks/': ['Webhook health (admin)', 'Every webhook with its state, last delivery, failures in a row and backlog; failing first; paged.'],

  // History
  [`GET ${GW}/operations/`]: ['Operation log', 'The base\'s writes, newest first, with the changed cells; paged.'],
  [`GET ${GW}/db-operations/`]: ['Operation log (db)', 'The same log in the original\'s `db-operations` shape.'],
  [`GET ${GW}/activities/`]: ['Row history', 'A row\'s changes and comments over time.'],
  [`PUT ${GW}/restore-operations/{op_id}/`]: ['Undo an operation', 'Reverts one logged write with a new write.'],
  [`GET ${GW}/trash/rows/`]: ['Deleted rows', 'Rows deleted from the base, restorable until the retention ends.'],
  [`PUT ${GW}/trash/rows/{row_id}/`]: ['Restore a deleted row', 'Brings a deleted row back with its links.'],

  // Audit
  'GET /api/v2.1/admin/audit-logs/': ['Audit log (admin)', 'Hash-chained record of security-relevant actions; paged and filterable.'],
  'GET /api/v2.1/admin/logs/login-logs/': ['Login log (admin)', 'Sign-ins and failed attempts with address and time.'],
  'GET /api/v2.1/dtables/{base_uuid}/audit-logs/': ['A base\'s audit log', 'Audit entries of one base, for its owner.'],

  // Assets
  'GET /api/v2.1/dtable/app-upload-link/': ['Upload link (API-Token)', 'A signed link to upload a file or image to the API-Token\'s base.'],
  'GET /api/v2.1/dtable/app-download-link/': ['Download link (API-Token)', 'A signed, short-lived link to download a file of the base.'],
  'DELETE /api/v2.1/dtable/app-asset/': ['Delete a file (API-Token)', 'Removes a file from the base\'s storage.'],
  'GET /api/v2.1/workspace/{workspace_id}/dtable-asset-upload-link/': ['Upload link', 'A signed link to upload files to a base of the workspace.'],
  'GET /api/v2.1/dtable-asset/{base_uuid}/': ['List files', 'The files stored for a base.'],
  'DELETE /api/v2.1/dtable-asset/{base_uuid}/': ['Delete a file', 'Removes one file of the base.'],
  'GET /api/v2.1/dtable-recent-asset/{base_uuid}/': ['Recent files', 'The base\'s most recently uploaded files.'],
  'POST /api/v2.1/dtable-asset/{base_uuid}/rename/': ['Rename a file', 'Gives a stored file a new name.'],
  'DELETE /api/v2.1/dtable-asset/{base_uuid}/batch-delete-assets/': ['Delete files', 'Removes several files of the base.'],
  [`GET ${WS}/asset-exists/`]: ['Does a file exist', 'Whether a path is stored for the base.'],
  'GET /workspace/{workspace_id}/asset/{base_uuid}/{*}': ['Download a file', 'A stored file of the base (for users with access), streamed.'],
  'GET /seafhttp/files/{token}/{name}': ['Download by signed link', 'The file a download link names, while the link is valid.'],
  'POST /seafhttp/upload-api/{token}': ['Upload by signed link', 'Multipart upload to the path of an upload link; size limit and per-base quota apply.'],

  // Import and export
  'GET /api/v2.1/workspace/{workspace_id}/synchronous-export/export-table-to-excel/': ['Export a table', 'A table as XLSX (or CSV), streamed; formula-like text is escaped.'],
  'GET /api/v2.1/workspace/{workspace_id}/synchronous-export/export-view-to-excel/': ['Export a view', 'The rows and columns a view shows, as XLSX (or CSV).'],
  'POST /api/v2.1/workspace/{workspace_id}/synchronous-import/preview/': ['Preview an import', 'The columns and first rows a CSV/XLSX file would give, without importing.'],
  'POST /api/v2.1/workspace/{workspace_id}/synchronous-import/import-excel-csv-to-base/': ['Import a file as a base', 'A new base from a CSV/XLSX file.'],
  'POST /api/v2.1/workspace/{workspace_id}/synchronous-import/import-excel-csv-to-table/': ['Import a file as a table', 'A new table in a base from a CSV/XLSX file.'],
  'POST /api/v2.1/workspace/{workspace_id}/synchronous-import/append-excel-csv-to-table/': ['Append a file to a table', 'The file\'s rows appended to an existing table; all or nothing.'],
  'POST /api/v2.1/workspace/{workspace_id}/synchronous-import/update-table-via-excel-csv/': ['Update a table from a file', 'Rows matched by key columns are updated, the others appended.'],
  'GET /api/v2.1/workspace/{workspace_id}/synchronous-export/export-dtable/': ['Export a base', 'The whole base (tables, rows, files) as a `.dtable` zip archive.'],
  'POST /api/v2.1/workspace/{workspace_id}/import-dtable/': ['Import a base', 'A new base from a `.dtable` archive.'],
};

/** The catalogue key of a Fastify route: `GET /a/{param}/` (OpenAPI's path form). */
export const operationKey = (method: string, url: string) => `${method.toUpperCase()} ${url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{*}')}`;
