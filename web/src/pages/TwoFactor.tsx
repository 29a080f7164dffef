import { useEffect, useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import QRCode from 'qrcode';
import { api } from '../api';
import { CopyButton, ErrorText, Loading, useAction } from '../ui';
import { t } from '../i18n';

interface Status {
  enabled: boolean;
  pending: boolean;
  force_2fa: boolean;
  recovery_codes_left: number;
}

/**
 * Two-factor sign-in: enrol with a QR code (or the secret typed into the app), confirm with a code,
 * keep the recovery codes; turn it off with a code.
 */
export function TwoFactor() {
  const client = useQueryClient();
  const status = useQuery(['two-factor'], () => api<Status>('/api/v2.1/user/two-factor-auth/'));
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_uri: string } | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const action = useAction();
  useEffect(() => {
    if (!enrolment) return setQr(null);
    void QRCode.toDataURL(enrolment.otpauth_uri, { margin: 1, width: 192 }).then(setQr);
  }, [enrolment]);
  const refresh = () => client.invalidateQueries(['two-factor']);
  const begin = () =>
    void action.run(async () => {
      setRecovery(null);
      setEnrolment(await api<{ secret: string; otpauth_uri: string }>('/api/v2.1/user/two-factor-auth/', { method: 'POST' }));
    });
  const confirm = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      const { recovery_codes } = await api<{ recovery_codes: string[] }>('/api/v2.1/user/two-factor-auth/', { method: 'PUT', body: { code: code.trim() } });
      setRecovery(recovery_codes);
      setEnrolment(null);
      setCode('');
      await refresh();
    });
  };
  const disable = (e: FormEvent) => {
    e.preventDefault();
    void action.run(async () => {
      await api('/api/v2.1/user/two-factor-auth/', { method: 'DELETE', body: { code: code.trim() } });
      setCode('');
      await refresh();
    });
  };
  if (status.isLoading) return <Loading />;
  const s = status.data;
  return (
    <section aria-label={t('twoFactor.twoFactorSignIn')}>
      <h2>{t('twoFactor.twoFactorSignIn')}</h2>
      {s?.force_2fa && !s.enabled && <p className="notice">{t('twoFactor.yourAdministratorAsksYou')}</p>}
      {recovery && (
        <div className="notice" role="status" aria-label={t('twoFactor.recoveryCodes')}>
          {t('twoFactor.twoFactorSignIn2')}
          <pre data-testid="recovery-codes">{recovery.join('\n')}</pre>
          <CopyButton text={recovery.join('\n')} />
        </div>
      )}
      {s?.enabled ? (
        <form onSubmit={disable} className="stack" aria-label={t('twoFactor.turnOffTwoFactor')}>
          <p>{t('twoFactor.onRecoveryCodesLeft', { recovery_codes_left: s.recovery_codes_left })}</p>
          <label>
            {t('twoFactor.codeFromYourApp')}
            <input value={code} onChange={(e) => setCode(e.target.value)} required maxLength={11} autoComplete="one-time-code" />
          </label>
          <button type="submit" disabled={action.busy}>
            {t('twoFactor.turnOff')}
          </button>
        </form>
      ) : enrolment ? (
        <form onSubmit={confirm} className="stack" aria-label={t('twoFactor.confirmTwoFactorSign')}>
          <p>{t('twoFactor.scanThisCodeWith')}</p>
          {qr && <img src={qr} alt={t('twoFactor.qrCodeForYour')} width={192} height={192} />}
          <p>
            {t('twoFactor.secret')}{' '}<code className="secret" data-testid="totp-secret">{enrolment.secret}</code> <CopyButton text={enrolment.secret} />
          </p>
          <label>
            {t('twoFactor.code')}
            <input value={code} onChange={(e) => setCode(e.target.value)} required inputMode="numeric" pattern="\d{6}" maxLength={6} autoComplete="one-time-code" />
          </label>
          <button type="submit" disabled={action.busy}>
            {t('twoFactor.turnOn')}
          </button>
        </form>
      ) : (
        <p>
          {t('twoFactor.off')}{' '}
          <button type="button" onClick={begin} disabled={action.busy}>
            {t('twoFactor.setUpTwoFactor')}
          </button>
        </p>
      )}
      <ErrorText error={action.error} />
    </section>
  );
}
