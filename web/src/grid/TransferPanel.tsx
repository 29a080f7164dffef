import { useRef, useState, type DragEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, apiDownload, enc } from '../api';
import { t } from '../i18n';
import { ErrorText, useAction } from '../ui';
import { gateway, q, type BaseAccess, type WorkspaceRef } from './base';
import { initialMapping, mappingField, newColumnsOf, SheetMapping, type Mapping, type PreviewSheet } from './ImportMapping';
import { fileSize, saveFile } from './save-file';
import type { Table, View } from '../types';

const workspacePath = (w: WorkspaceRef, suffix: string) => `/api/v2.1/workspace/${enc(w.workspaceId)}/${suffix}`;

/** Export the current view as CSV or XLSX; import a CSV/XLSX file into a new or an existing table after a preview with an editable column mapping. */
export function TransferPanel(props: { access: BaseAccess; workspace: WorkspaceRef; table: Table; tables: Table[]; view: View | undefined; canEdit: boolean }) {
  return (
    <section className="panel transfer" aria-label={t('transfer.label')}>
      {props.view && <ExportView {...props} view={props.view} />}
      {props.canEdit && <ImportFile {...props} />}
    </section>
  );
}

function ExportView({ workspace, table, view }: { workspace: WorkspaceRef; table: Table; view: View }) {
  const action = useAction();
  const exportAs = (format: 'csv' | 'xlsx') =>
    action.run(async () => {
      const query = q({ dtable_name: workspace.baseName, table_name: table.name, view_name: view.name, format: format === 'csv' ? 'csv' : undefined });
      const file = await apiDownload(workspacePath(workspace, `synchronous-export/export-view-to-excel/?${query}`), `${table.name}_${view.name}.${format}`);
      saveFile(file.blob, file.filename);
    });
  return (
    <div className="transfer-export">
      <h3>{t('transfer.export', { view: view.name })}</h3>
      <button type="button" disabled={action.busy} onClick={() => void exportAs('csv')} aria-label={t('transfer.exportAs', { format: 'CSV' })}>
        {t('transferPanel.csv')}
      </button>{' '}
      <button type="button" disabled={action.busy} onClick={() => void exportAs('xlsx')} aria-label={t('transfer.exportAs', { format: 'XLSX' })}>
        {t('transferPanel.xlsx')}
      </button>
      <ErrorText error={action.error} />
    </div>
  );
}

function ImportFile({ access, workspace, tables }: { access: BaseAccess; workspace: WorkspaceRef; tables: Table[] }) {
  const client = useQueryClient();
  const action = useAction();
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<PreviewSheet[] | null>(null);
  /** '' = a new table; otherwise the name of the table to append to. */
  const [target, setTarget] = useState('');
  const [mapping, setMapping] = useState<Mapping>({});
  // The target as chosen now: a preview that arrives after the user picked a table maps onto that table.
  const targetNow = useRef('');
  const retarget = (name: string) => {
    targetNow.current = name;
    setTarget(name);
    if (preview) setMapping(initialMapping(preview, tables.find((tb) => tb.name === name)));
  };
  const [done, setDone] = useState('');
  const [dragging, setDragging] = useState(false);

  const choose = (chosen: File | undefined) => {
    if (!chosen) return;
    setFile(chosen);
    setPreview(null);
    setDone('');
    void action.run(async () => {
      const form = new FormData();
      form.append('file', chosen, chosen.name);
      const sheets = (await api<{ tables: PreviewSheet[] }>(workspacePath(workspace, 'synchronous-import/preview/'), { form })).tables;
      setPreview(sheets);
      setMapping(initialMapping(sheets, tables.find((tb) => tb.name === targetNow.current)));
    });
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    choose(e.dataTransfer.files[0]);
  };
  const runImport = () =>
    action.run(async () => {
      if (!file || !preview) return;
      // A new column for an existing table is added first (it stays if the append then fails).
      if (target)
        for (const column of newColumnsOf(mapping))
          await gateway(access, 'columns/', { method: 'POST', body: { table_name: target, column_name: column.name, column_type: column.type, ...(column.type === 'date' ? { column_data: { format: 'YYYY-MM-DD' } } : {}) } });
      const form = new FormData();
      form.append('dtable_uuid', access.dtable_uuid);
      if (target) form.append('table_name', target);
      form.append('column_mapping', mappingField(target ? Object.fromEntries(Object.entries(mapping).slice(0, 1)) : mapping));
      form.append('file', file, file.name);
      if (target) {
        const r = await api<{ appended: number }>(workspacePath(workspace, 'synchronous-import/append-excel-csv-to-table/'), { form });
        setDone(t('transfer.appended', { count: r.appended, table: target }));
      } else {
        const r = await api<{ tables: string[] }>(workspacePath(workspace, 'synchronous-import/import-excel-csv-to-table/'), { form });
        setDone(t('transfer.created', { tables: r.tables.join(', ') }));
      }
      setFile(null);
      setPreview(null);
      await client.invalidateQueries(['metadata', access.dtable_uuid]);
      await client.invalidateQueries(['rows', access.dtable_uuid]);
    });

  const targetTable = tables.find((tb) => tb.name === target);
  // A new column needs a name (the import waits for it rather than leaving the column out).
  const unnamedNewColumn = Object.values(mapping).some((columns) => Object.values(columns).some((c) => c.to === 'new' && !c.name.trim()));
  return (
    <div className="transfer-import">
      <h3>{t('transfer.import')}</h3>
      <div
        className={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
        data-testid="import-dropzone"
      >
        <label>
          {t('transfer.file')} <input type="file" accept=".csv,.xlsx" onChange={(e) => choose(e.target.files?.[0])} />
        </label>
        <p className="hint">{file ? t('transfer.chosen', { name: file.name, size: fileSize(file.size) }) : t('transfer.drop')}</p>
      </div>
      <label>
        {t('transfer.target')}{' '}
        <select aria-label={t('transfer.target')} value={target} onChange={(e) => retarget(e.target.value)}>
          <option value="">{t('transfer.newTable')}</option>
          {tables.map((tb) => (
            <option key={tb._id} value={tb.name}>
              {t('transfer.appendTo', { table: tb.name })}
            </option>
          ))}
        </select>
      </label>
      {action.busy && <p role="status">{t('transfer.working')}</p>}
      {preview?.slice(0, targetTable ? 1 : undefined).map((sheet) => (
        <SheetMapping
          key={`${target}/${sheet.name}`}
          sheet={sheet}
          into={targetTable}
          choices={mapping[sheet.name] ?? {}}
          onChange={(source, choice) => setMapping((old) => ({ ...old, [sheet.name]: { ...old[sheet.name], [source]: choice } }))}
        />
      ))}
      {preview && (
        <button type="button" disabled={action.busy || unnamedNewColumn} onClick={() => void runImport()}>
          {targetTable ? t('transfer.runAppend', { table: targetTable.name }) : t('transfer.runNew')}
        </button>
      )}
      {done && <p role="status">{done}</p>}
      <ErrorText error={action.error} />
    </div>
  );
}
