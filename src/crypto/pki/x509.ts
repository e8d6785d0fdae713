// The one entry point to @peculiar/x509: its decorators need reflect-metadata loaded first, and its
// crypto provider must point at workerd's WebCrypto (it only finds it by itself when `self` exists).
import 'reflect-metadata';
import { cryptoProvider } from '@peculiar/x509';

export * from '@peculiar/x509';

if (!cryptoProvider.has('default')) cryptoProvider.set(crypto);
