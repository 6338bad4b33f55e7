# syntax=docker/dockerfile:1.7
# The equivalent of examples/small/spec.json for BuildKit; its build context is
# examples/small:
#   docker buildx build -f dockerfiles/small.Dockerfile -t small examples/small
# Same file tree as imgtool's image (app/ with its symlink kept, config.txt 0640 owned by
# 10001, /etc/passwd and /etc/group with the user, /etc/imgtool/stack.json with the cuda
# pin), except that the empty home folder /home/app is not created (FROM scratch has no
# way to make an empty folder without a file in it).
FROM scratch
COPY --link app/ /opt/app/
COPY --link --chmod=0640 --chown=10001:10001 data/config.txt /opt/data/config.txt
COPY --link <<EOT /etc/passwd
root:x:0:0:root:/root:/sbin/nologin
app:x:10001:10001::/home/app:/sbin/nologin
EOT
COPY --link <<EOT /etc/group
root:x:0:
app:x:10001:
EOT
COPY --link <<EOT /etc/imgtool/stack.json
{"components":{"cuda":{"version":"13.0.96"}},"schemaVersion":1}
EOT
ENV PATH=/opt/app:/usr/bin:/bin
LABEL org.opencontainers.image.title="imgtool small example" org.imgtool.stack.cuda=13.0.96
USER 10001:10001
ENTRYPOINT ["/opt/app/hello.sh"]
