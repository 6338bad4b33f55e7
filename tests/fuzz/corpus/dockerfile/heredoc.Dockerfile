# syntax=docker/dockerfile:1
# escape=\
ARG BASE=debian@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
FROM ${BASE} AS build
RUN <<EOF
set -e
echo hi
EOF
COPY --from=build <<-'X' /etc/motd
	hello
X
ADD --checksum=sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb https://example.invalid/a.tgz /a
FROM build
USER 10001:10001
