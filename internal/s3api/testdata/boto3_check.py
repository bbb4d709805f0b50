"""Exercises a twinlake site through boto3 (botocore: the AWS CLI's and most
Python tools' S3 client) as its users call it. Run by TestBoto3 with the
site's endpoint and credentials in TWINLAKE_ENDPOINT, TWINLAKE_ACCESS_KEY and
TWINLAKE_SECRET_KEY. Prints one line per check; the first check that fails
raises, and the process exits non-zero with the traceback."""

import hashlib
import http.client
import io
import os
import urllib.parse
import urllib.request
import uuid

import boto3
import botocore
from boto3.s3.transfer import TransferConfig
from botocore.config import Config

s3 = boto3.client(
    "s3",
    endpoint_url=os.environ["TWINLAKE_ENDPOINT"],
    aws_access_key_id=os.environ["TWINLAKE_ACCESS_KEY"],
    aws_secret_access_key=os.environ["TWINLAKE_SECRET_KEY"],
    region_name="us-east-1",
    config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"}),
)
B = "boto3-check"


def check(name):
    def run(fn):
        fn()
        print("ok", name, flush=True)
        return fn

    return run


def http_put(url, data):
    """PUTs data to url with no header but Content-Length: the status and body."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.netloc, timeout=30)
    conn.request("PUT", parts.path + "?" + parts.query, body=data)
    r = conn.getresponse()
    return r.status, r.read()


def error_code(fn):
    """The S3 error code fn's call fails with (None if it succeeds)."""
    try:
        fn()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return None


@check("bucket")
def _():
    s3.create_bucket(Bucket=B)
    s3.head_bucket(Bucket=B)
    assert B in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    assert error_code(lambda: s3.create_bucket(Bucket=B)) in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists")
    assert error_code(lambda: s3.head_bucket(Bucket="boto3-missing")) == "404"


@check("put and get with metadata")
def _():
    s3.put_object(Bucket=B, Key="a/b.txt", Body=b"hello", Metadata={"color": "blue"}, ContentType="text/plain")
    r = s3.get_object(Bucket=B, Key="a/b.txt")
    assert r["Body"].read() == b"hello"
    assert r["Metadata"] == {"color": "blue"}, r["Metadata"]
    assert r["ContentType"] == "text/plain"
    assert r["ETag"] == '"%s"' % hashlib.md5(b"hello").hexdigest()
    assert error_code(lambda: s3.get_object(Bucket=B, Key="a/missing")) == "NoSuchKey"


@check("keys that need escaping")
def _():
    keys = ["sp ace/x y.txt", "plus+sign", "per%cent", "uni/\u00e9t\u00e9-\u65e5\u672c", "q?a=b&c", "tilde~star*"]
    for k in keys:
        s3.put_object(Bucket=B, Key="esc/" + k, Body=k.encode())
    for k in keys:
        assert s3.get_object(Bucket=B, Key="esc/" + k)["Body"].read() == k.encode(), k
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=B, Prefix="esc/")["Contents"]]
    assert sorted(listed) == sorted("esc/" + k for k in keys), listed
    # boto3 asks for URL-encoded keys in listings and decodes them itself.
    listed = [o["Key"] for o in s3.list_objects(Bucket=B, Prefix="esc/")["Contents"]]
    assert sorted(listed) == sorted("esc/" + k for k in keys), listed


@check("checksums")
def _():
    body = b"x" * 1000
    for algo in ("CRC32", "SHA1", "SHA256"):  # CRC32C needs botocore[crt]
        s3.put_object(Bucket=B, Key="sum/" + algo, Body=body, ChecksumAlgorithm=algo)
        r = s3.get_object(Bucket=B, Key="sum/" + algo, ChecksumMode="ENABLED")
        assert r["Body"].read() == body
        assert ("Checksum" + algo) in r, (algo, r.keys())
    assert s3.get_object(Bucket=B, Key="sum/SHA256", ChecksumMode="ENABLED")["ChecksumSHA256"] == \
        __import__("base64").b64encode(hashlib.sha256(body).digest()).decode()


@check("ranged get")
def _():
    s3.put_object(Bucket=B, Key="range", Body=bytes(range(256)))
    r = s3.get_object(Bucket=B, Key="range", Range="bytes=10-19")
    assert r["Body"].read() == bytes(range(10, 20))
    assert r["ContentRange"] == "bytes 10-19/256", r["ContentRange"]
    assert error_code(lambda: s3.get_object(Bucket=B, Key="range", Range="bytes=300-400")) == "InvalidRange"


@check("managed transfer: multipart upload and parallel ranged download")
def _():
    data = os.urandom(20 * 1024 * 1024 + 123)
    cfg = TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024, max_concurrency=4)
    s3.upload_fileobj(io.BytesIO(data), B, "big.bin", Config=cfg)
    head = s3.head_object(Bucket=B, Key="big.bin")
    assert head["ContentLength"] == len(data)
    assert head["ETag"].endswith('-5"'), head["ETag"]
    out = io.BytesIO()
    s3.download_fileobj(B, "big.bin", out, Config=cfg)
    assert out.getvalue() == data


@check("multipart by hand, with CRC32 parts")
def _():
    u = s3.create_multipart_upload(Bucket=B, Key="mp", ChecksumAlgorithm="CRC32")
    parts = []
    for n, body in ((1, b"1" * (5 * 1024 * 1024)), (2, b"2" * 1000)):
        p = s3.upload_part(Bucket=B, Key="mp", UploadId=u["UploadId"], PartNumber=n, Body=body, ChecksumAlgorithm="CRC32")
        parts.append({"PartNumber": n, "ETag": p["ETag"], "ChecksumCRC32": p["ChecksumCRC32"]})
    listed = s3.list_parts(Bucket=B, Key="mp", UploadId=u["UploadId"])["Parts"]
    assert [p["PartNumber"] for p in listed] == [1, 2]
    assert u["UploadId"] in [x["UploadId"] for x in s3.list_multipart_uploads(Bucket=B).get("Uploads", [])]
    r = s3.complete_multipart_upload(Bucket=B, Key="mp", UploadId=u["UploadId"], MultipartUpload={"Parts": parts})
    assert r["ETag"].endswith('-2"') and r["ChecksumCRC32"].endswith("-2"), r
    attrs = s3.get_object_attributes(Bucket=B, Key="mp", ObjectAttributes=["ObjectParts", "ObjectSize", "Checksum"])
    assert attrs["ObjectSize"] == 5 * 1024 * 1024 + 1000
    assert attrs["ObjectParts"]["TotalPartsCount"] == 2
    part = s3.head_object(Bucket=B, Key="mp", PartNumber=2)
    assert part["ContentLength"] == 1000 and part["PartsCount"] == 2
    gone = s3.create_multipart_upload(Bucket=B, Key="mp-aborted")
    s3.abort_multipart_upload(Bucket=B, Key="mp-aborted", UploadId=gone["UploadId"])
    assert error_code(lambda: s3.list_parts(Bucket=B, Key="mp-aborted", UploadId=gone["UploadId"])) == "NoSuchUpload"


@check("copy")
def _():
    s3.copy_object(Bucket=B, Key="copied", CopySource={"Bucket": B, "Key": "a/b.txt"})
    r = s3.get_object(Bucket=B, Key="copied")
    assert r["Body"].read() == b"hello" and r["Metadata"] == {"color": "blue"}
    s3.copy_object(Bucket=B, Key="copied", CopySource={"Bucket": B, "Key": "a/b.txt"},
                   MetadataDirective="REPLACE", Metadata={"color": "red"})
    assert s3.head_object(Bucket=B, Key="copied")["Metadata"] == {"color": "red"}
    # The managed copy: a multipart copy (UploadPartCopy) above the threshold.
    s3.copy({"Bucket": B, "Key": "big.bin"}, B, "big-copy.bin",
            Config=TransferConfig(multipart_threshold=8 * 1024 * 1024, multipart_chunksize=8 * 1024 * 1024))
    a = s3.head_object(Bucket=B, Key="big.bin")["ContentLength"]
    assert s3.head_object(Bucket=B, Key="big-copy.bin")["ContentLength"] == a


@check("paginated listings")
def _():
    for i in range(25):
        s3.put_object(Bucket=B, Key="page/%02d/obj" % i, Body=b"")
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=B, Prefix="page/", PaginationConfig={"PageSize": 7})
    keys = [o["Key"] for p in pages for o in p.get("Contents", [])]
    assert keys == ["page/%02d/obj" % i for i in range(25)], keys
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=B, Prefix="page/", Delimiter="/", PaginationConfig={"PageSize": 10})
    prefixes = [c["Prefix"] for p in pages for c in p.get("CommonPrefixes", [])]
    assert prefixes == ["page/%02d/" % i for i in range(25)], prefixes
    pages = s3.get_paginator("list_objects").paginate(Bucket=B, Prefix="page/", PaginationConfig={"PageSize": 10})
    assert len([o for p in pages for o in p.get("Contents", [])]) == 25


@check("delete objects")
def _():
    r = s3.delete_objects(Bucket=B, Delete={"Objects": [{"Key": "page/%02d/obj" % i} for i in range(25)] + [{"Key": "never-was"}]})
    assert len(r["Deleted"]) == 26 and not r.get("Errors"), r
    assert "Contents" not in s3.list_objects_v2(Bucket=B, Prefix="page/")


@check("versioning")
def _():
    s3.put_bucket_versioning(Bucket=B, VersioningConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_versioning(Bucket=B)["Status"] == "Enabled"
    ids = [s3.put_object(Bucket=B, Key="v", Body=b"v%d" % i)["VersionId"] for i in range(3)]
    s3.delete_object(Bucket=B, Key="v")
    assert error_code(lambda: s3.get_object(Bucket=B, Key="v")) == "NoSuchKey"
    assert s3.get_object(Bucket=B, Key="v", VersionId=ids[0])["Body"].read() == b"v0"
    r = s3.list_object_versions(Bucket=B, Prefix="v")
    assert [v["VersionId"] for v in r["Versions"]] == ids[::-1]
    assert len(r["DeleteMarkers"]) == 1 and r["DeleteMarkers"][0]["IsLatest"]
    s3.delete_object(Bucket=B, Key="v", VersionId=r["DeleteMarkers"][0]["VersionId"])
    assert s3.get_object(Bucket=B, Key="v")["Body"].read() == b"v2"


@check("conditional writes and reads")
def _():
    # Conditional PUTs came to S3 in 2024: an older botocore (Debian 12's
    # is 1.29) has no such parameters, and only the reads are checked.
    if "IfNoneMatch" in s3.meta.service_model.operation_model("PutObject").input_shape.members:
        etag = s3.put_object(Bucket=B, Key="cond", Body=b"1", IfNoneMatch="*")["ETag"]
        assert error_code(lambda: s3.put_object(Bucket=B, Key="cond", Body=b"2", IfNoneMatch="*")) == "PreconditionFailed"
        assert error_code(lambda: s3.put_object(Bucket=B, Key="cond", Body=b"2", IfMatch='"0123"')) == "PreconditionFailed"
        s3.put_object(Bucket=B, Key="cond", Body=b"2", IfMatch=etag)
    else:
        print("botocore %s has no conditional PUT: reads only" % botocore.__version__)
        etag = s3.put_object(Bucket=B, Key="cond", Body=b"1")["ETag"]
        s3.put_object(Bucket=B, Key="cond", Body=b"2")
    assert error_code(lambda: s3.get_object(Bucket=B, Key="cond", IfMatch=etag)) == "PreconditionFailed"
    assert error_code(lambda: s3.get_object(Bucket=B, Key="cond", IfNoneMatch=s3.head_object(Bucket=B, Key="cond")["ETag"])) == "304"


@check("tags")
def _():
    s3.put_object(Bucket=B, Key="tagged", Body=b"t", Tagging="team=data&tier=hot")
    tags = s3.get_object_tagging(Bucket=B, Key="tagged")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("team", "data"), ("tier", "hot")], tags
    s3.put_bucket_tagging(Bucket=B, Tagging={"TagSet": [{"Key": "owner", "Value": "lake"}]})
    assert s3.get_bucket_tagging(Bucket=B)["TagSet"] == [{"Key": "owner", "Value": "lake"}]


@check("bucket settings")
def _():
    s3.put_bucket_lifecycle_configuration(Bucket=B, LifecycleConfiguration={"Rules": [
        {"ID": "tmp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"}, "Expiration": {"Days": 1}}]})
    assert s3.get_bucket_lifecycle_configuration(Bucket=B)["Rules"][0]["ID"] == "tmp"
    s3.put_bucket_cors(Bucket=B, CORSConfiguration={"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["*"]}]})
    assert s3.get_bucket_cors(Bucket=B)["CORSRules"][0]["AllowedMethods"] == ["GET"]
    s3.put_bucket_encryption(Bucket=B, ServerSideEncryptionConfiguration={"Rules": [
        {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    r = s3.put_object(Bucket=B, Key="enc", Body=b"secret")
    assert r["ServerSideEncryption"] == "AES256"
    assert s3.get_object(Bucket=B, Key="enc")["Body"].read() == b"secret"
    s3.delete_bucket_encryption(Bucket=B)
    for read in (s3.get_bucket_website, s3.get_public_access_block, s3.get_bucket_ownership_controls):
        assert error_code(lambda: read(Bucket=B)) in (
            "NoSuchWebsiteConfiguration", "NoSuchPublicAccessBlockConfiguration", "OwnershipControlsNotFoundError")
    assert s3.get_bucket_acl(Bucket=B)["Grants"][0]["Permission"] == "FULL_CONTROL"
    assert error_code(lambda: s3.delete_bucket(Bucket=B)) == "BucketNotEmpty"


@check("presigned URLs and POST")
def _():
    # boto3 presigns S3 URLs with signature version 2 unless told otherwise;
    # both are served. The PUT sends no Content-Type, which a version 2
    # signature covers (urllib would add one).
    for client in (s3, boto3.client("s3", endpoint_url=os.environ["TWINLAKE_ENDPOINT"],
                                     aws_access_key_id=os.environ["TWINLAKE_ACCESS_KEY"],
                                     aws_secret_access_key=os.environ["TWINLAKE_SECRET_KEY"], region_name="us-east-1",
                                     config=Config(signature_version="s3v4"))):
        url = client.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "a/b.txt"}, ExpiresIn=60)
        assert urllib.request.urlopen(url).read() == b"hello"
        url = client.generate_presigned_url("put_object", Params={"Bucket": B, "Key": "presigned-put"}, ExpiresIn=60)
        status, _ = http_put(url, b"put by url")
        assert status == 200, (status, url)
        assert s3.get_object(Bucket=B, Key="presigned-put")["Body"].read() == b"put by url"
        status, body = http_put(url.replace("presigned-put", "presigned-other"), b"x")
        assert status == 403 and b"SignatureDoesNotMatch" in body, (status, body)
    post = s3.generate_presigned_post(B, "posted", Conditions=[["content-length-range", 1, 100]], ExpiresIn=60)
    boundary = uuid.uuid4().hex
    body = b""
    for k, v in post["fields"].items():
        body += b'--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (boundary.encode(), k.encode(), v.encode())
    body += b'--%s\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nposted!\r\n--%s--\r\n' % (
        boundary.encode(), boundary.encode())
    urllib.request.urlopen(urllib.request.Request(post["url"], data=body,
                                                  headers={"Content-Type": "multipart/form-data; boundary=" + boundary}))
    assert s3.get_object(Bucket=B, Key="posted")["Body"].read() == b"posted!"


@check("object lock")
def _():
    L = B + "-lock"
    s3.create_bucket(Bucket=L, ObjectLockEnabledForBucket=True)
    s3.put_object_lock_configuration(Bucket=L, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    vid = s3.put_object(Bucket=L, Key="kept", Body=b"k")["VersionId"]
    assert s3.head_object(Bucket=L, Key="kept")["ObjectLockMode"] == "GOVERNANCE"
    assert error_code(lambda: s3.delete_object(Bucket=L, Key="kept", VersionId=vid)) == "AccessDenied"
    s3.put_object_legal_hold(Bucket=L, Key="kept", LegalHold={"Status": "ON"})
    assert s3.get_object_legal_hold(Bucket=L, Key="kept")["LegalHold"]["Status"] == "ON"
    assert error_code(lambda: s3.delete_object(Bucket=L, Key="kept", VersionId=vid, BypassGovernanceRetention=True)) == "AccessDenied"
    s3.put_object_legal_hold(Bucket=L, Key="kept", LegalHold={"Status": "OFF"})
    s3.delete_object(Bucket=L, Key="kept", VersionId=vid, BypassGovernanceRetention=True)


@check("wrong credentials")
def _():
    bad = boto3.client("s3", endpoint_url=os.environ["TWINLAKE_ENDPOINT"], aws_access_key_id=os.environ["TWINLAKE_ACCESS_KEY"],
                       aws_secret_access_key="not-the-secret", region_name="us-east-1",
                       config=Config(retries={"max_attempts": 1}))
    assert error_code(lambda: bad.list_objects_v2(Bucket=B)) == "SignatureDoesNotMatch"


print("all checks passed with boto3 %s, botocore %s" % (boto3.__version__, botocore.__version__))
