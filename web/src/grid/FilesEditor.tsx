import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent as ReactKeyboardEvent, type ReactNode, type RefObject } from 'react';
import { createPortal } from 'react-dom';
import type { EditorProps } from 'react-data-grid';
import { api, apiDownload, enc } from '../api';
import { t } from '../i18n';
import { ErrorText, useAction } from '../ui';
import { safeHref } from './format';
import { fileSize, saveFile } from './save-file';
import type { BaseAccess, WorkspaceRef } from './base';
import type { Column, Row } from '../types';

/** A file cell's item, as the original stores it; an image cell holds URLs. */
export interface FileItem {
  name: string;
  size?: number;
  type?: string;
  url: string;
}

const MAX_FILES_AT_ONCE = 20;

/** The items of a file or image cell, whatever shape the value has. */
export function fileItems(value: unknown, type: string): FileItem[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v): FileItem[] => {
    if (type === 'image' && typeof v === 'string') return [{ name: decodeURIComponent(v.split('/').pop() ?? v), url: v }];
    if (v && typeof v === 'object' && typeof (v as FileItem).url === 'string') {
      const item = v as FileItem;
      return [{ ...item, name: typeof item.name === 'string' ? item.name : item.url }];
    }
    return [];
  });
}

/** The server path of one of this server's asset URLs (`…/workspace/<id>/asset/<uuid>/<path>`), read with the Account-Token. */
function assetPath(url: string): string | null {
  try {
    const parsed = new URL(url, window.location.origin);
    return /^\/workspace\/[^/]+\/asset\//.test(parsed.pathname) ? parsed.pathname : null;
  } catch {
    return null;
  }
}

/** Reads one of this server's files, by its URL path (assetPath): its bytes for a preview or a download. */
type ReadAsset = (path: string, name: string) => Promise<{ blob: Blob }>;

/** With the signed-in user's Account-Token, which the file URL takes. */
const withAccount: ReadAsset = (path, name) => apiDownload(path, name);

/**
 * With the base's Base-Token (a read-only share, an external link's visitor who has no account):
 * a signed download link for the file's path inside the base, then the file from that link.
 */
function withBaseToken(access: BaseAccess): ReadAsset {
  return async (path, name) => {
    const inBase = decodeURIComponent(path.replace(/^\/workspace\/[^/]+\/asset\/[^/]+/, ''));
    const { download_link } = await api<{ download_link: string }>(
      `/api-gateway/api/v2/dtables/${enc(access.dtable_uuid)}/asset-download-link/?path=${enc(inBase)}`,
      { token: access.access_token },
    );
    const link = new URL(download_link, window.location.origin);
    // The signed link is the credential: no token with it.
    return apiDownload(link.pathname, name, { token: null });
  };
}

/** Uploads one file to the base's assets (signed upload link) and answers the cell item for it. */
async function upload(workspace: WorkspaceRef, file: File, kind: 'file' | 'image'): Promise<FileItem> {
  const link = await api<{ upload_link: string; parent_path: string; img_relative_path: string; file_relative_path: string }>(
    `/api/v2.1/workspace/${enc(workspace.workspaceId)}/dtable-asset-upload-link/?name=${enc(workspace.baseName)}`,
  );
  const relative = kind === 'image' ? link.img_relative_path : link.file_relative_path;
  const target = new URL(link.upload_link, window.location.origin);
  const form = new FormData();
  form.append('parent_dir', link.parent_path);
  form.append('relative_path', relative);
  form.append('file', file, file.name);
  // The signed link is the credential: no Account-Token with it.
  const stored = await api<Array<{ name: string; size: number }>>(`${target.pathname}?ret-json=1`, { form, token: null });
  const name = stored[0]?.name ?? file.name;
  const url = `${target.origin}/workspace/${enc(workspace.workspaceId)}${link.parent_path}/${relative}/${enc(name)}`;
  return { name, size: stored[0]?.size ?? file.size, type: 'file', url };
}

/** An image's thumbnail, read with a token (an `<img src>` could not send it). */
function Thumbnail({ item, read }: { item: FileItem; read: ReadAsset }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    const path = assetPath(item.url);
    if (!path) return;
    let url: string | null = null;
    let gone = false;
    read(path, item.name)
      .then(({ blob }) => {
        if (gone) return;
        url = URL.createObjectURL(blob);
        setSrc(url);
      })
      .catch(() => undefined);
    return () => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [item.url, item.name, read]);
  return src ? <img className="thumb" src={src} alt={t('files.thumbnail', { name: item.name })} /> : <span className="thumb" aria-hidden="true" />;
}

/** One listed file: preview, name, size and type, download, and remove when the cell may change. */
function FileEntry({ item, image, read, onRemove }: { item: FileItem; image: boolean; read: ReadAsset; onRemove?: () => void }) {
  const action = useAction();
  const path = assetPath(item.url);
  const download = () =>
    action.run(async () => {
      const file = await read(path!, item.name);
      saveFile(file.blob, item.name);
    });
  const external = path ? null : safeHref(item.url);
  return (
    <li className="file-entry">
      {image && <Thumbnail item={item} read={read} />}
      <span className="file-name">{item.name}</span>
      <span className="muted small">
        {[item.size !== undefined ? fileSize(item.size) : null, image ? t('files.typeImage') : fileType(item.name)].filter(Boolean).join(' · ')}
      </span>
      {path ? (
        <button type="button" onClick={() => void download()} disabled={action.busy} aria-label={t('files.download', { name: item.name })}>
          {t('files.downloadShort')}
        </button>
      ) : external ? (
        <a href={external} target="_blank" rel="noreferrer noopener">
          {t('files.open')}
        </a>
      ) : null}
      {onRemove && (
        <button type="button" onClick={onRemove} aria-label={t('files.remove', { name: item.name })}>
          {t('files.removeShort')}
        </button>
      )}
      <ErrorText error={action.error} />
    </li>
  );
}

/** "report.PDF" → "PDF file". */
const fileType = (name: string) => {
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1];
  return ext ? t('files.typeOf', { ext: ext.toUpperCase() }) : t('files.typeFile');
};

/**
 * A modal dialog keeps the focus: Tab from its last control goes to its first, Shift+Tab from its first
 * (or from the dialog itself, which has the focus after a Remove) to its last.
 */
function keepFocusIn(container: HTMLElement, e: ReactKeyboardEvent) {
  const controls = [...container.querySelectorAll<HTMLElement>('input, a[href], button:not(:disabled)')];
  if (controls.length === 0) return;
  const at = controls.indexOf(e.target as HTMLElement);
  const next = e.shiftKey ? (at <= 0 ? controls[controls.length - 1] : null) : at === controls.length - 1 ? controls[0] : null;
  if (!next) return;
  e.preventDefault();
  next.focus();
}

/** A file or image cell's dialog: its files listed with previews and download; `children` adds the editing controls. */
function FilesDialog({ column, items, read, onClose, onRemove, boxRef, children }: {
  column: Column;
  items: FileItem[];
  read: ReadAsset;
  onClose: () => void;
  onRemove?: (at: number) => void;
  boxRef?: RefObject<HTMLDivElement>;
  children: ReactNode;
}) {
  const image = column.type === 'image';
  // A pressed button that turns disabled while it works (Download) drops the focus to the page: Escape still closes.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && e.target === document.body) onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);
  return createPortal(
    <div
      className="dialog-backdrop"
      onKeyDown={(e) => {
        e.stopPropagation();
        if (e.key === 'Escape') onClose();
        else if (e.key === 'Tab') keepFocusIn(e.currentTarget, e);
      }}
    >
      <div ref={boxRef} tabIndex={-1} className="dialog files-dialog" role="dialog" aria-modal="true" aria-label={t('files.label', { column: column.name })}>
        <h3>{t('files.label', { column: column.name })}</h3>
        {items.length === 0 ? (
          <p className="muted">{t('files.none')}</p>
        ) : (
          <ul className="file-list" aria-label={t('files.list', { column: column.name })}>
            {items.map((item, i) => (
              <FileEntry key={`${item.url}-${i}`} item={item} image={image} read={read} onRemove={onRemove && (() => onRemove(i))} />
            ))}
          </ul>
        )}
        {children}
      </div>
    </div>,
    document.body,
  );
}

/**
 * A file or image cell's editor: the files with previews, download and remove, and new ones added
 * by choosing or dropping them (uploaded at once to the base's assets). Save writes the cell once,
 * through the grid's own write (and undo).
 */
export function filesEditor(workspace: WorkspaceRef, column: Column) {
  const image = column.type === 'image';
  return function FilesEditor({ row, onRowChange, onClose }: EditorProps<Row>) {
    const [items, setItems] = useState<FileItem[]>(() => fileItems(row[column.name], column.type));
    const [dragging, setDragging] = useState(false);
    const action = useAction();
    const box = useRef<HTMLDivElement>(null);
    // The removed entry's button had the focus: keep it in the dialog (Escape and Tab go on working).
    const remove = (at: number) => {
      setItems((now) => now.filter((_, i) => i !== at));
      box.current?.focus();
    };
    const add = (files: FileList | null | undefined) => {
      const chosen = [...(files ?? [])].slice(0, MAX_FILES_AT_ONCE);
      if (chosen.length === 0) return;
      void action.run(async () => {
        for (const file of chosen) {
          const item = await upload(workspace, file, image ? 'image' : 'file');
          setItems((now) => [...now, item]);
        }
      });
    };
    const onDrop = (e: DragEvent) => {
      e.preventDefault();
      setDragging(false);
      add(e.dataTransfer.files);
    };
    const save = () => onRowChange({ ...row, [column.name]: image ? items.map((i) => i.url) : items }, true);
    return (
      <FilesDialog column={column} items={items} read={withAccount} onClose={() => onClose(false)} onRemove={remove} boxRef={box}>
        <div
          className={`dropzone${dragging ? ' dragging' : ''}`}
          data-testid="files-dropzone"
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          <label>
            {image ? t('files.addImages') : t('files.addFiles')}{' '}
            <input type="file" multiple accept={image ? 'image/*' : undefined} autoFocus onChange={(e) => add(e.target.files)} />
          </label>
          <p className="hint">{t('files.drop')}</p>
        </div>
        {action.busy && <p role="status">{t('files.uploading')}</p>}
        <ErrorText error={action.error} />
        <div className="inline">
          <button type="button" className="primary" onClick={save} disabled={action.busy}>
            {t('files.save')}
          </button>
          <button type="button" onClick={() => onClose(false)}>
            {t('files.cancel')}
          </button>
        </div>
      </FilesDialog>
    );
  };
}

/**
 * A file or image cell for someone who may not change it (a read-only share, an external link): the
 * same previews and downloads, read with the Base-Token, and no upload or remove.
 */
export function filesPreview(access: BaseAccess, column: Column) {
  const read = withBaseToken(access);
  return function FilesPreview({ row, onClose }: EditorProps<Row>) {
    const items = fileItems(row[column.name], column.type);
    const box = useRef<HTMLDivElement>(null);
    // The dialog takes the focus, not its Close button: the Enter that opened it would press that at once.
    useEffect(() => box.current?.focus(), []);
    return (
      <FilesDialog column={column} items={items} read={read} onClose={() => onClose(false)} boxRef={box}>
        <div className="inline">
          <button type="button" className="primary" onClick={() => onClose(false)}>
            {t('files.close')}
          </button>
        </div>
      </FilesDialog>
    );
  };
}
