import { useState, type DragEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, apiDownload, enc } from '../api';
import { t } from '../i18n';
import { ErrorText, useAction } from '../ui';
import { q, type BaseAccess, type WorkspaceRef } from './base';
import { fileSize, saveFile } from './save-file';
import type { Table, View } from '../types';

/** One sheet of the file as the server's `preview/` reads it: nothing is written. */
interface PreviewSheet {
  name: string;
  columns: Array<{ name: string; type: string }>;
  rows: number;
  sample: Array<Record<string, unknown>>;
}

const SAMPLE_SHOWN = 5;
const workspacePath = (w: WorkspaceRef, suffix: string) => `/api/v2.1/workspace/${enc(w.workspaceId)}/${suffix}`;

/** Export the current view as CSV or XLSX; import a CSV/XLSX file into a new or an existing table after a preview. */
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
      setPreview((await api<{ tables: PreviewSheet[] }>(workspacePath(workspace, 'synchronous-import/preview/'), { form })).tables);
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
      const form = new FormData();
      form.append('dtable_uuid', access.dtable_uuid);
      if (target) form.append('table_name', target);
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
        <select aria-label={t('transfer.target')} value={target} onChange={(e) => setTarget(e.target.value)}>
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
        <SheetPreview key={sheet.name} sheet={sheet} into={targetTable} />
      ))}
      {preview && (
        <button type="button" disabled={action.busy} onClick={() => void runImport()}>
          {targetTable ? t('transfer.runAppend', { table: targetTable.name }) : t('transfer.runNew')}
        </button>
      )}
      {done && <p role="status">{done}</p>}
      <ErrorText error={action.error} />
    </div>
  );
}

/** How a sheet's columns land: new columns of the inferred type, or (appending) the table's column of the same name. */
function SheetPreview({ sheet, into }: { sheet: PreviewSheet; into: Table | undefined }) {
  const sample = sheet.sample.slice(0, SAMPLE_SHOWN);
  return (
    <div className="transfer-preview">
      <table aria-label={t('transfer.mapping', { sheet: sheet.name })}>
        <caption>{t('transfer.sheet', { sheet: sheet.name, rows: sheet.rows })}</caption>
        <thead>
          <tr>
            <th scope="col">{t('transfer.fileColumn')}</th>
            <th scope="col">{t('transfer.type')}</th>
            <th scope="col">{t('transfer.goesTo')}</th>
          </tr>
        </thead>
        <tbody>
          {sheet.columns.map((c) => {
            const match = into?.columns.find((col) => col.name === c.name);
            return (
              <tr key={c.name}>
                <td>{c.name}</td>
                <td>{c.type}</td>
                <td>{!into ? t('transfer.newColumn', { column: c.name }) : match ? match.name : <em>{t('transfer.skipped')}</em>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {sample.length > 0 && (
        <div className="scroll-x">
          <table aria-label={t('transfer.sample', { sheet: sheet.name })}>
            <thead>
              <tr>
                {sheet.columns.map((c) => (
                  <th key={c.name} scope="col">
                    {c.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {sample.map((row, i) => (
                <tr key={i}>
                  {sheet.columns.map((c) => (
                    <td key={c.name}>{cellText(row[c.name])}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

const cellText = (value: unknown) => (value === null || value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value));
