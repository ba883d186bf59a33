#!/usr/bin/env bash
# A certificate authority for a check, and a server certificate it signs for localhost and
# 127.0.0.1 (ECDSA P-256, valid two days), with the openssl command: FOLDER/ca.pem (what clients
# trust), ca.key, cert.pem and key.pem (what the server is given).
#
#   scripts/make-test-ca.sh FOLDER
set -euo pipefail
folder=${1:?usage: make-test-ca.sh FOLDER}
mkdir -p "$folder"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$folder/ca.key" -out "$folder/ca.pem" \
    -days 2 -subj "/CN=navigation-values check CA" -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$folder/key.pem" -out "$folder/server.csr" \
    -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$folder/server.ext"
openssl x509 -req -in "$folder/server.csr" -CA "$folder/ca.pem" -CAkey "$folder/ca.key" -set_serial 1 -days 2 \
    -extfile "$folder/server.ext" -out "$folder/cert.pem" 2>/dev/null
rm -f "$folder/server.csr" "$folder/server.ext"
