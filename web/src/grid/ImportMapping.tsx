import { t } from '../i18n';
import type { Table } from '../types';

/** One sheet of the file as the server's `preview/` reads it: nothing is written. */
export interface PreviewSheet {
  name: string;
  /** `types`: the types all of the column's cells convert to (a mapping may choose one). */
  columns: Array<{ name: string; type: string; types?: string[] }>;
  rows: number;
  sample: Array<Record<string, unknown>>;
}

/** Where one file column goes: nowhere, a new column (name, type) or a column of the existing table. */
export type Choice = { to: 'skip' } | { to: 'new'; name: string; type: string } | { to: 'column'; name: string };
/** Per sheet, per file column. */
export type Mapping = Record<string, Record<string, Choice>>;

const SAMPLE_SHOWN = 5;

/** The mapping an import starts with: new columns as inferred, or (appending) the table's column of the same name, else skipped. */
export function initialMapping(sheets: PreviewSheet[], into: Table | undefined): Mapping {
  return Object.fromEntries(
    sheets.map((sheet) => [
      sheet.name,
      Object.fromEntries(
        sheet.columns.map((c): [string, Choice] => {
          if (!into) return [c.name, { to: 'new', name: c.name, type: c.type }];
          return [c.name, into.columns.some((col) => col.name === c.name) ? { to: 'column', name: c.name } : { to: 'skip' }];
        }),
      ),
    ]),
  );
}

/** The server's `column_mapping` for these choices (new columns of an existing table must have been added first). */
export function mappingField(mapping: Mapping): string {
  const field = Object.fromEntries(
    Object.entries(mapping).map(([sheet, columns]) => [
      sheet,
      Object.fromEntries(Object.entries(columns).map(([source, c]) => [source, c.to === 'skip' ? null : c.to === 'new' && !c.name.trim() ? null : { column: c.name.trim(), ...(c.to === 'new' ? { type: c.type } : {}) }])),
    ]),
  );
  return JSON.stringify(field);
}

/** The new columns the choices add to an existing table. */
export function newColumnsOf(mapping: Mapping): Array<{ name: string; type: string }> {
  return Object.values(mapping).flatMap((columns) => Object.values(columns).flatMap((c) => (c.to === 'new' && c.name.trim() ? [{ name: c.name.trim(), type: c.type }] : [])));
}

const typeName = (type: string) => t(`columnType.${type}` as Parameters<typeof t>[0]);

/**
 * A sheet's columns with where each goes, changeable (a select per file column: an existing column, a
 * new column with its name and type, or not imported), and the first rows as they would be imported.
 */
export function SheetMapping({ sheet, into, choices, onChange }: { sheet: PreviewSheet; into: Table | undefined; choices: Record<string, Choice>; onChange: (source: string, choice: Choice) => void }) {
  const sample = sheet.sample.slice(0, SAMPLE_SHOWN);
  const imported = sheet.columns.filter((c) => (choices[c.name]?.to ?? 'skip') !== 'skip');
  const targetName = (source: string) => {
    const c = choices[source];
    return c && c.to !== 'skip' ? c.name : source;
  };
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
            const choice = choices[c.name] ?? { to: 'skip' };
            const types = c.types?.length ? c.types : [c.type];
            const value = choice.to === 'column' ? `column:${choice.name}` : choice.to;
            return (
              <tr key={c.name}>
                <th scope="row">{c.name}</th>
                <td>{typeName(c.type)}</td>
                <td>
                  <select
                    aria-label={t('transfer.goesToOf', { column: c.name })}
                    value={value}
                    onChange={(e) => {
                      const v = e.target.value;
                      if (v === 'skip') onChange(c.name, { to: 'skip' });
                      else if (v === 'new') onChange(c.name, { to: 'new', name: into?.columns.some((col) => col.name === c.name) ? '' : c.name, type: c.type });
                      else onChange(c.name, { to: 'column', name: v.slice('column:'.length) });
                    }}
                  >
                    {into?.columns.map((col) => (
                      <option key={col.key} value={`column:${col.name}`}>
                        {t('transfer.toColumn', { column: col.name })}
                      </option>
                    ))}
                    <option value="new">{t('transfer.toNewColumn')}</option>
                    <option value="skip">{t('transfer.skip')}</option>
                  </select>
                  {choice.to === 'new' && (
                    <>
                      {' '}
                      <input aria-label={t('transfer.newColumnName', { column: c.name })} value={choice.name} required maxLength={255} onChange={(e) => onChange(c.name, { ...choice, name: e.target.value })} />{' '}
                      <select aria-label={t('transfer.newColumnType', { column: c.name })} value={choice.type} onChange={(e) => onChange(c.name, { ...choice, type: e.target.value })}>
                        {types.map((type) => (
                          <option key={type} value={type}>
                            {typeName(type)}
                          </option>
                        ))}
                      </select>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {sample.length > 0 && imported.length > 0 && (
        <div className="scroll-x">
          <table aria-label={t('transfer.sample', { sheet: sheet.name })}>
            <thead>
              <tr>
                {imported.map((c) => (
                  <th key={c.name} scope="col">
                    {targetName(c.name)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {sample.map((row, i) => (
                <tr key={i}>
                  {imported.map((c) => (
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
