// The one error crypto throws for input it cannot use (a malformed key, certificate, CSR or
// name). Crypto knows nothing of HTTP: the framework maps this to a 400 with the message
// (asCofferError), where engines catch errors and where a request's error becomes its answer.

export class CryptoInputError extends Error {
  override readonly name = 'CryptoInputError';
}
