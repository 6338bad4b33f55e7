# syntax=docker/dockerfile:1.7
# The equivalent of examples/golden/spec.json. Needs a build context named "cuda"
# pointing at /usr/local/cuda.
FROM scratch
COPY --from=cuda --link lib/libcudart.so* /usr/local/cuda/lib/
COPY --from=cuda --link lib/libcudnn*.so* /usr/local/cuda/lib/
COPY --from=cuda --link lib/libnccl.so* /usr/local/cuda/lib/
COPY --link <<EOT /etc/passwd
root:x:0:0:root:/root:/sbin/nologin
trainer:x:10001:10001::/home/trainer:/sbin/nologin
EOT
COPY --link <<EOT /etc/group
root:x:0:
trainer:x:10001:
EOT
COPY --link <<EOT /etc/imgtool/stack.json
{"components":{"cuda":{"version":"13.0.96"},"cudnn":{"version":"9.19.0"},"nccl":{"version":"2.28.9"}},"schemaVersion":1}
EOT
ENV LD_LIBRARY_PATH=/usr/local/cuda/lib PATH=/usr/local/bin:/usr/bin:/bin
LABEL org.imgtool.stack.cuda=13.0.96 org.imgtool.stack.cudnn=9.19.0 org.imgtool.stack.nccl=2.28.9
USER 10001:10001
WORKDIR /home/trainer
