/**
 * The metadata document of a new base: one table `Table1` (id `0000`) with a text column `Name`
 * (key `0000`) and a `Default View` (id `0000`), as the original creates it.
 */
export function defaultMetadata() {
  return {
    version: 2,
    format_version: 9,
    settings: {},
    tables: [
      {
        _id: '0000',
        name: 'Table1',
        is_header_locked: false,
        header_settings: {},
        summary_configs: {},
        columns: [{ key: '0000', name: 'Name', type: 'text', width: 200, editable: true, resizable: true, draggable: true, data: null }],
        views: [
          {
            _id: '0000',
            name: 'Default View',
            type: 'table',
            is_locked: false,
            filter_conjunction: 'And',
            filters: [],
            sorts: [],
            groupbys: [],
            hidden_columns: [],
          },
        ],
      },
    ],
  };
}

export function defaultMetadataJson(): string {
  return JSON.stringify(defaultMetadata());
}
