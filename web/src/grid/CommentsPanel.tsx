import { useRef, useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSession } from '../session';
import { ConfirmButton, Empty, ErrorText, Loading, clearIfSent, useAction } from '../ui';
import { gateway, q, type BaseAccess } from './base';
import { useRelatedUsers } from './people';
import type { Row, Table } from '../types';
import { t } from '../i18n';

interface Comment {
  id: number;
  author: string;
  comment: string;
  created_at: string;
  updated_at: string;
}

const when = (iso: string) => iso.replace('T', ' ').slice(0, 16);


/** The comments of one row: list (newest first), add with @mentions, edit and delete one's own. */
export function CommentsPanel({ access, table, row, onClose }: { access: BaseAccess; table: Table; row: Row; onClose: () => void }) {
  const { user } = useSession();
  const client = useQueryClient();
  const key = ['comments', access.dtable_uuid, row._id];
  const comments = useQuery(key, () => gateway<Comment[]>(access, `comments/?${q({ row_id: row._id, table_id: table._id, limit: 100 })}`));
  // Read again whenever the panel opens: someone the base was just shared with can be mentioned.
  const people = useRelatedUsers(access, { refetchOnMount: 'always' });
  const nameOf = (author: string) => people.data?.find((p) => p.email === author)?.name || author;
  const action = useAction();
  const [text, setText] = useState('');
  const box = useRef<HTMLTextAreaElement>(null);
  const refresh = () => client.invalidateQueries(key);
  const add = (e: FormEvent) => {
    e.preventDefault();
    const sent = text;
    void action.run(async () => {
      await gateway(access, 'comments/', { method: 'POST', body: { comment: sent, row_id: row._id, table_id: table._id } });
      clearIfSent(setText, sent, '');
      await refresh();
    });
  };
  const mention = (email: string) => {
    setText((t) => `${t}${t && !t.endsWith(' ') ? ' ' : ''}@${email} `);
    box.current?.focus();
  };
  const rowName = String(row[table.columns[0]?.name ?? ''] ?? '') || row._id;
  return (
    <aside className="panel comments" aria-label={t('commentsPanel.rowComments')}>
      <div className="inline">
        <h3>{t('commentsPanel.commentsOnRowname', { rowName })}</h3>
        <button type="button" onClick={onClose} aria-label={t('commentsPanel.closeComments')}>
          ×
        </button>
      </div>
      <form onSubmit={add} className="stack" aria-label={t('commentsPanel.newComment')}>
        <textarea ref={box} aria-label={t('commentsPanel.comment')} placeholder={t('commentsPanel.writeACommentE')} value={text} onChange={(e) => setText(e.target.value)} required maxLength={10000} />
        <div className="inline">
          <label>
            {t('commentsPanel.mention')}{' '}
            <select aria-label={t('commentsPanel.mentionSomeone')} value="" onChange={(e) => e.target.value && mention(e.target.value)}>
              <option value="">—</option>
              {(people.data ?? [])
                .filter((p) => p.email !== user?.email)
                .map((p) => (
                  <option key={p.email} value={p.contact_email}>
                    {p.name || p.contact_email}
                  </option>
                ))}
            </select>
          </label>
          <button type="submit" disabled={action.busy}>
            {t('commentsPanel.addComment')}
          </button>
        </div>
      </form>
      <ErrorText error={action.error} />
      {comments.isLoading ? (
        <Loading what={t('commentsPanel.loadingComments')} />
      ) : comments.error ? (
        <ErrorText error={comments.error} />
      ) : (comments.data ?? []).length === 0 ? (
        <Empty>{t('commentsPanel.noCommentsOnThis')}</Empty>
      ) : (
        <ul className="plain" aria-label={t('toolbar.comments')}>
          {comments.data!.map((c) => (
            <CommentItem key={c.id} comment={c} author={nameOf(c.author)} own={c.author === user?.email} access={access} onChanged={refresh} />
          ))}
        </ul>
      )}
    </aside>
  );
}

function CommentItem({ comment, author, own, access, onChanged }: { comment: Comment; author: string; own: boolean; access: BaseAccess; onChanged: () => Promise<unknown> }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(comment.comment);
  const action = useAction();
  const save = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await gateway(access, `comments/${comment.id}/`, { method: 'PUT', body: { comment: text } });
      setEditing(false);
      await onChanged();
    });
  };
  return (
    <li aria-label={t('commentsPanel.commentByAuthor', { author })}>
      <span className="small muted">
        {author} · {when(comment.created_at)}
        {comment.updated_at !== comment.created_at ? t('commentsPanel.edited') : ''}
      </span>
      {editing ? (
        <form onSubmit={save} className="stack" aria-label={t('commentsPanel.editComment')}>
          <textarea aria-label={t('commentsPanel.editedComment')} value={text} onChange={(e) => setText(e.target.value)} required maxLength={10000} />
          <div className="inline">
            <button type="submit" disabled={action.busy}>
              {t('commentsPanel.saveComment')}
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              {t('common.cancel')}
            </button>
          </div>
        </form>
      ) : (
        <p className="comment-text">{comment.comment}</p>
      )}
      {own && !editing && (
        <div className="inline">
          <button type="button" onClick={() => setEditing(true)}>
            {t('rowForm.editShort')}
          </button>
          <ConfirmButton
            label={t('common.delete')}
            question={t('commentsPanel.deleteThisComment')}
            onConfirm={() =>
              void action.run(async () => {
                await gateway(access, `comments/${comment.id}/`, { method: 'DELETE' });
                await onChanged();
              })
            }
          />
        </div>
      )}
      <ErrorText error={action.error} />
    </li>
  );
}
